import type { AdminClient } from "./types";

/**
 * A client's on/off settings. The dashboard's forms show them as checkboxes, and its server action
 * reads each one named in a form's `settings` back as true or false (an unchecked box is not sent).
 */
export const CLIENT_FLAGS = [
  "requirePkce",
  "requirePushedAuthorizationRequests",
  "requireConsent",
  "resourceServer",
  "refreshTokensAllowed",
  "deviceFlow",
  "deviceFlowOfflineAccess",
  "tokenExchange",
  "dpopBoundAccessTokens",
  "managementApi",
  "backchannelLogoutSessionRequired",
] as const satisfies readonly (keyof AdminClient)[];

export type ClientFlag = (typeof CLIENT_FLAGS)[number];

export const isClientFlag = (name: string): name is ClientFlag => (CLIENT_FLAGS as readonly string[]).includes(name);

/** The settings card's plain options, in the order shown: label, and what it does for this client. */
export const CLIENT_OPTIONS: { name: ClientFlag; label: string; hint: (client: AdminClient) => string }[] = [
  {
    name: "requirePkce",
    label: "Require PKCE",
    hint: (client) =>
      client.confidential
        ? "Authorization requests without a code challenge (S256) are refused. Public clients always need PKCE."
        : "Public clients always need PKCE, whatever this says; it applies if the client gets a secret.",
  },
  {
    name: "requirePushedAuthorizationRequests",
    label: "Require pushed authorization requests (PAR)",
    hint: () => "Authorization requests must be pushed to /par first (RFC 9126); /auth refuses any other.",
  },
  {
    name: "requireConsent",
    label: "Ask users' consent (third-party)",
    hint: () =>
      "The hosted login shows a consent page with the scopes in words, until the user has allowed this client them; users see and revoke the access at /account. Off: a first-party client, whose registration stands for consent.",
  },
  {
    name: "resourceServer",
    label: "Resource server",
    hint: () => "May introspect tokens issued to other clients; other clients introspect only their own.",
  },
  {
    name: "refreshTokensAllowed",
    label: "Refresh tokens",
    hint: () =>
      "May ask for the offline_access scope and get a refresh token with its tokens (on devices, only with Keep devices signed in).",
  },
  {
    name: "deviceFlow",
    label: "Device flow",
    hint: () =>
      "May sign users in on a screen without a keyboard (TV, car, terminal): the user enters a short code at /device on a phone (RFC 8628).",
  },
  {
    name: "deviceFlowOfflineAccess",
    label: "Keep devices signed in",
    hint: (client) =>
      client.refreshTokensAllowed
        ? "Devices may get a refresh token (offline_access) too. Off: a device's sign-in ends with its access token, so a code someone was tricked into approving does not give a device access for good."
        : "Devices may get a refresh token (offline_access) too; needs Refresh tokens above.",
  },
  {
    name: "tokenExchange",
    label: "Vehicle token exchange",
    hint: () => "May exchange its access tokens for vehicle tokens (RFC 8693 token exchange).",
  },
  {
    name: "dpopBoundAccessTokens",
    label: "Require DPoP",
    hint: () =>
      "Token requests without a DPoP proof (RFC 9449) are refused: every access token is bound to the client's key, worthless without it.",
  },
];
