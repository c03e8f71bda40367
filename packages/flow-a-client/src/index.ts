/**
 * @keyfob/flow-a-client: Flow A (a wallet or a license key signs Keyfob's challenge) from the
 * application's side. It depends on viem only; nothing of the Keyfob server is in it.
 */
import { getAddress, isAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export type GetTokenOptions = {
  /** Keyfob's base URL, e.g. https://auth.example.com */
  authUrl: string;
  /** The developer license address (or other client id). */
  clientId: string;
  /** A redirect URI registered for the client. */
  domain: string;
  /** The key that signs the challenge: the license's own key or one of its enabled signers. */
  privateKey: Hex;
  /** The address the tokens are for; defaults to clientId when it is an address (a license signing through a signer). */
  address?: string;
  scope?: string;
  /** The chain Keyfob's challenges name (its CHAIN_ID); default 1. */
  chainId?: number;
};

export type Tokens = { access_token: string; token_type: string; expires_in: number; id_token: string };

/** Error body Keyfob answers with. */
export class KeyfobError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    description: string,
  ) {
    super(`${code}: ${description}`);
    this.name = "KeyfobError";
  }
}

/** A "challenge" the library refuses to sign: it is not the Flow A challenge it asked for. */
export class UnsafeChallengeError extends Error {
  constructor(reason: string) {
    super(`refusing to sign: ${reason}`);
    this.name = "UnsafeChallengeError";
  }
}

/** This machine: the one place plain http is acceptable. */
const isLoopbackHost = (hostname: string) => ["localhost", "127.0.0.1", "[::1]"].includes(hostname);

/** How long a challenge's Issued At may be from this machine's clock. */
const MAX_CLOCK_DIFFERENCE_MS = 5 * 60_000;

/** The Flow A challenge's exact layout (Keyfob's lib/siwe/challenge.ts), and nothing else: no statement of its own, no resources. */
const FLOW_A_CHALLENGE =
  /^(?<host>\S+) wants you to sign in with your Ethereum account:\n(?<address>0x[0-9a-fA-F]{40})\n\n(?<domainHost>\S+) is asking you sign in\.\n\nURI: (?<uri>\S+)\nVersion: 1\nChain ID: (?<chainId>\d+)\nNonce: [0-9A-Za-z]{30}\nIssued At: (?<issuedAt>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/;

/**
 * Checks that `challenge` is a fresh Flow A challenge from `authUrl` for this domain, address and
 * chain. A key that signs whatever it is sent is a signing oracle: a hostile or mistyped authUrl
 * could hand it another site's sign-in message (Keyfob's own hosted login, say) and log in as it.
 */
export function checkChallenge(
  challenge: string,
  expected: { authUrl: string; domain: string; address: string; chainId: number; now?: Date },
): void {
  const fields = FLOW_A_CHALLENGE.exec(challenge)?.groups;
  if (!fields) throw new UnsafeChallengeError("the challenge is not a Flow A challenge");
  const auth = new URL(expected.authUrl);
  if (fields.host !== auth.host || fields.uri !== expected.authUrl.replace(/\/+$/, ""))
    throw new UnsafeChallengeError(`the challenge is not for ${auth.origin}`);
  if (fields.domainHost !== new URL(expected.domain).hostname) throw new UnsafeChallengeError("the challenge is for another domain");
  if (getAddress(fields.address) !== getAddress(expected.address)) throw new UnsafeChallengeError("the challenge is for another address");
  if (Number(fields.chainId) !== expected.chainId)
    throw new UnsafeChallengeError(`the challenge is for chain ${fields.chainId}, not ${expected.chainId}`);
  const skew = Math.abs(new Date(fields.issuedAt).getTime() - (expected.now ?? new Date()).getTime());
  if (!(skew <= MAX_CLOCK_DIFFERENCE_MS)) throw new UnsafeChallengeError("the challenge was not issued just now");
}

/** Flow A from the application's side: generate_challenge, check and sign the challenge with the key, submit_challenge. */
export async function getToken(options: GetTokenOptions): Promise<Tokens> {
  const account = privateKeyToAccount(options.privateKey);
  const base = options.authUrl.replace(/\/+$/, "");
  const url = new URL(base);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new UnsafeChallengeError(`authUrl must use https (http only on localhost): ${url.origin}`);
  }
  const address = options.address ?? (isAddress(options.clientId, { strict: false }) ? options.clientId : account.address);

  const { state, challenge } = await post<{ state: string; challenge: string }>(`${base}/auth/web3/generate_challenge`, {
    client_id: options.clientId,
    domain: options.domain,
    scope: options.scope ?? "openid email",
    response_type: "code",
    address,
  });
  checkChallenge(challenge, { authUrl: base, domain: options.domain, address, chainId: options.chainId ?? 1 });
  const signature = await account.signMessage({ message: challenge });
  return post<Tokens>(`${base}/auth/web3/submit_challenge`, {
    client_id: options.clientId,
    state,
    grant_type: "authorization_code",
    domain: options.domain,
    signature,
  });
}

export type GetVehicleTokenOptions = {
  /** The vehicle: its DID, did:erc721:<chainId>:<contract>:<tokenId>. */
  vehicle: string;
  /** The privileges, by name ("GetNonLocationHistory" or "privilege:GetNonLocationHistory"). */
  privileges: string[];
  /** The vehicle token's audience; Keyfob's default (the platform's) without. */
  audience?: string;
} & (
  | /** An access token the client already holds (a Flow A developer token, or a user's from Flow B). */ {
      accessToken: string;
      authUrl: string;
      clientId: string;
    }
  | /** Or Flow A first, with getToken's options. */ GetTokenOptions
);

/** A vehicle token (RFC 8693 2.2.1). */
export type VehicleToken = { access_token: string; issued_token_type: string; token_type: string; expires_in: number; scope: string };

/**
 * A vehicle token in one call: Keyfob's RFC 8693 token exchange at /token, for the access token
 * given, or for a developer token Flow A gets first. The vehicle's owner must have granted the
 * license the privileges on chain, and an admin must have allowed the client token exchange.
 */
export async function getVehicleToken(options: GetVehicleTokenOptions): Promise<VehicleToken> {
  const subject = "accessToken" in options ? options.accessToken : (await getToken(options)).access_token;
  const base = options.authUrl.replace(/\/+$/, "");
  return post<VehicleToken>(`${base}/token`, {
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    client_id: options.clientId,
    subject_token: subject,
    subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
    resource: options.vehicle,
    scope: options.privileges.map((name) => (name.startsWith("privilege:") ? name : `privilege:${name}`)).join(" "),
    ...(options.audience !== undefined && { audience: options.audience }),
  });
}

async function post<T>(url: string, form: Record<string, string>): Promise<T> {
  const response = await fetch(url, { method: "POST", body: new URLSearchParams(form) });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new KeyfobError(response.status, body.error ?? "http_error", body.error_description ?? response.statusText);
  }
  return body as T;
}
