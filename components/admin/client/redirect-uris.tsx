/** The client page's redirect URIs and post-logout redirect URIs, each listed as stored, removable, with a form to add one. */
import {
  addPostLogoutRedirectUriAction,
  addRedirectUriAction,
  removePostLogoutRedirectUriAction,
  removeRedirectUriAction,
} from "@/app/admin/_lib/actions";
import { ValueListCard } from "@/components/admin/value-list";
import type { AdminClient } from "./types";

export function RedirectUris({ client }: { client: AdminClient }) {
  return (
    <ValueListCard
      id="redirect-uris"
      title="Redirect URIs"
      description="Matched exactly as written: https, or http on localhost only; no fragment. Flow A's domain is one of these."
      clientId={client.id}
      field="uri"
      values={client.redirectUris.map(({ uri }) => uri)}
      empty="No redirect URIs yet: the client cannot sign anyone in until it has one."
      listLabel="Registered redirect URIs"
      remove={{
        action: removeRedirectUriAction,
        title: "Remove this redirect URI?",
        consequence: "Sign-ins and challenges for this URI are refused from now on.",
      }}
      add={{
        action: addRedirectUriAction,
        formLabel: "Add a redirect URI",
        fieldLabel: "New redirect URI",
        placeholder: "https://app.example.com/callback",
        button: "Add URI",
      }}
    />
  );
}

export function PostLogoutRedirectUris({ client }: { client: AdminClient }) {
  return (
    <ValueListCard
      id="post-logout-redirect-uris"
      title="Post-logout redirect URIs"
      description="Where the application may send the browser after it logs the user out at Keyfob (RP-Initiated Logout), matched exactly like redirect URIs."
      clientId={client.id}
      field="uri"
      values={client.postLogoutRedirectUris.map(({ uri }) => uri)}
      empty="None: after a logout Keyfob shows its own signed-out page."
      listLabel="Registered post-logout redirect URIs"
      remove={{
        action: removePostLogoutRedirectUriAction,
        title: "Remove this post-logout redirect URI?",
        consequence: "Logouts that ask to return here get Keyfob's signed-out page from now on.",
      }}
      add={{
        action: addPostLogoutRedirectUriAction,
        formLabel: "Add a post-logout redirect URI",
        fieldLabel: "New post-logout redirect URI",
        placeholder: "https://app.example.com/signed-out",
        button: "Add URI",
      }}
    />
  );
}
