import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";

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

/** Flow A from the application's side: generate_challenge, sign it with the key, submit_challenge. */
export async function getToken(options: GetTokenOptions): Promise<Tokens> {
  const account = privateKeyToAccount(options.privateKey);
  const base = options.authUrl.replace(/\/+$/, "");
  const address = options.address ?? (/^0x[0-9a-fA-F]{40}$/.test(options.clientId) ? options.clientId : account.address);

  const { state, challenge } = await post<{ state: string; challenge: string }>(`${base}/auth/web3/generate_challenge`, {
    client_id: options.clientId,
    domain: options.domain,
    scope: options.scope ?? "openid email",
    response_type: "code",
    address,
  });
  const signature = await account.signMessage({ message: challenge });
  return post<Tokens>(`${base}/auth/web3/submit_challenge`, {
    client_id: options.clientId,
    state,
    grant_type: "authorization_code",
    domain: options.domain,
    signature,
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
