/**
 * @keyfob/flow-a-client: Flow A (a wallet or a license key signs Keyfob's challenge) from the
 * application's side. It depends on viem only; nothing of the Keyfob server is in it. The key that
 * signs is a raw private key, a viem account, or a function that signs (a KMS, a hardware key);
 * with a DPoP key pair (RFC 9449) the tokens are bound to it. getToken and getVehicleToken get
 * tokens once; createFlowAClient keeps a token and gets a new one before it expires.
 */
import { type Address, type Hex, isAddress, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { checkChallenge } from "./challenge.js";
import { type DPoPKeyPair, DPoPSigner, fetchWithProof } from "./dpop.js";
import { KeyfobError, UnsafeChallengeError } from "./errors.js";

export { checkChallenge } from "./challenge.js";
export { type DPoPKeyPair, generateDPoPKeyPair } from "./dpop.js";
export { KeyfobError, UnsafeChallengeError } from "./errors.js";

/** Signs a message as EIP-191 personal_sign does, wherever the key is (a KMS, a hardware key), and resolves to the signature. */
export type SignMessage = (message: string) => Promise<Hex>;

/** A viem account that signs messages: privateKeyToAccount's, mnemonicToAccount's, or a custom one (toAccount). */
export type MessageSigner = Pick<LocalAccount, "address" | "signMessage">;

export type GetTokenOptions = {
  /** Keyfob's base URL, e.g. https://auth.example.com */
  authUrl: string;
  /** The developer license address (or other client id). */
  clientId: string;
  /** A redirect URI registered for the client. */
  domain: string;
  /** The address the tokens are for; defaults to clientId when it is an address (a license signing through a signer), else the signer's. */
  address?: string;
  scope?: string;
  /** The chain Keyfob's challenges name (its CHAIN_ID); default 1. */
  chainId?: number;
  /** A DPoP key pair (RFC 9449): the access token is bound to it (token_type DPoP, cnf.jkt). */
  dpop?: DPoPKeyPair;
} & (
  | {
      /** The key that signs the challenge: the license's own key or one of its enabled signers. */
      privateKey: Hex;
      signer?: undefined;
    }
  | {
      /** What signs the challenge instead of a raw key: a viem account, or a function that signs. */
      signer: MessageSigner | SignMessage;
      privateKey?: undefined;
    }
);

export type Tokens = { access_token: string; token_type: string; expires_in: number; id_token: string };

/** Keyfob's base URL without trailing slashes; https, or http on this machine only. */
function baseUrl(authUrl: string): string {
  const base = authUrl.replace(/\/+$/, "");
  const url = new URL(base);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new UnsafeChallengeError(`authUrl must use https (http only on localhost): ${url.origin}`);
  }
  return base;
}

/** The signing function and, when it is known, the address of the key of `options`. */
function signingOf(options: GetTokenOptions): { address?: Address; sign: SignMessage } {
  if (options.privateKey !== undefined) {
    const account = privateKeyToAccount(options.privateKey);
    return { address: account.address, sign: (message) => account.signMessage({ message }) };
  }
  const { signer } = options;
  if (typeof signer === "function") return { sign: signer };
  if (typeof signer?.signMessage === "function") return { address: signer.address, sign: (message) => signer.signMessage({ message }) };
  throw new TypeError("give privateKey, or as signer a viem account or a function that signs a message");
}

/** Flow A: generate_challenge, check and sign the challenge, submit_challenge (with a DPoP proof when `dpop`). */
async function flowA(options: GetTokenOptions, dpop: DPoPSigner | undefined): Promise<Tokens> {
  const base = baseUrl(options.authUrl);
  const signing = signingOf(options);
  const address = options.address ?? (isAddress(options.clientId, { strict: false }) ? options.clientId : signing.address);
  if (address === undefined) throw new TypeError("address is needed with a signing function: the address the tokens are for");

  const { state, challenge } = await post<{ state: string; challenge: string }>(`${base}/auth/web3/generate_challenge`, {
    client_id: options.clientId,
    domain: options.domain,
    scope: options.scope ?? "openid email",
    response_type: "code",
    address,
  });
  checkChallenge(challenge, { authUrl: base, domain: options.domain, address, chainId: options.chainId ?? 1 });
  const signature = await signing.sign(challenge);
  return post<Tokens>(
    `${base}/auth/web3/submit_challenge`,
    { client_id: options.clientId, state, grant_type: "authorization_code", domain: options.domain, signature },
    dpop,
  );
}

/** Flow A from the application's side, once: generate_challenge, check and sign the challenge with the key, submit_challenge. */
export function getToken(options: GetTokenOptions): Promise<Tokens> {
  return flowA(options, options.dpop && new DPoPSigner(options.dpop));
}

/** The vehicle, the privileges and the audience a vehicle token is asked for. */
export type VehicleTokenRequest = {
  /** The vehicle: its DID, did:erc721:<chainId>:<contract>:<tokenId>. */
  vehicle: string;
  /** The privileges, by name ("GetNonLocationHistory" or "privilege:GetNonLocationHistory"). */
  privileges: string[];
  /** The vehicle token's audience; Keyfob's default (the platform's) without. */
  audience?: string;
};

export type GetVehicleTokenOptions = VehicleTokenRequest &
  (
    | /** An access token the client already holds (a Flow A developer token, or a user's from Flow B). */ {
        accessToken: string;
        authUrl: string;
        clientId: string;
        /** The DPoP key pair the access token is bound to, or one to bind the vehicle token to. */
        dpop?: DPoPKeyPair;
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
  const dpop = options.dpop && new DPoPSigner(options.dpop);
  const subject = "accessToken" in options ? options.accessToken : (await flowA(options, dpop)).access_token;
  return exchangeForVehicleToken(baseUrl(options.authUrl), options.clientId, subject, options, dpop);
}

function exchangeForVehicleToken(
  base: string,
  clientId: string,
  subject: string,
  request: VehicleTokenRequest,
  dpop: DPoPSigner | undefined,
): Promise<VehicleToken> {
  return post<VehicleToken>(
    `${base}/token`,
    {
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      client_id: clientId,
      subject_token: subject,
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      resource: request.vehicle,
      scope: request.privileges.map((name) => (name.startsWith("privilege:") ? name : `privilege:${name}`)).join(" "),
      ...(request.audience !== undefined && { audience: request.audience }),
    },
    dpop,
  );
}

export type FlowAClientOptions = GetTokenOptions & {
  /** How many seconds before its expiry a token is replaced; default 60, at most half the token's lifetime. */
  refreshBefore?: number;
};

/** A Flow A client that keeps its token: see createFlowAClient. */
export type FlowAClient = {
  /** The current token: the one held until shortly before it expires, then a new one (concurrent callers share one Flow A). */
  getToken(): Promise<Tokens>;
  /** `fetch` with the current token (`Authorization: Bearer`, or `DPoP` with a proof for the request when the token is bound). */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  /** A DPoP proof for a request of `method` to `url` (with the hash of `accessToken` as `ath`, for an API), by the client's key pair. */
  dpopProof(method: string, url: string | URL, accessToken?: string): Promise<string>;
  /** The DPoP key's JWK SHA-256 thumbprint: the `cnf.jkt` of the tokens bound to it. */
  dpopThumbprint(): Promise<string>;
  /** A vehicle token for the current token (bound to the DPoP key pair too, with one). */
  getVehicleToken(request: VehicleTokenRequest): Promise<VehicleToken>;
};

/**
 * A client that holds Flow A's token for the application: getToken answers with the token it holds
 * until `refreshBefore` seconds before it expires (measured from when it was asked for, with
 * expires_in, so the clocks of this machine and Keyfob's need not agree), then with a new one.
 */
export function createFlowAClient(options: FlowAClientOptions): FlowAClient {
  const base = baseUrl(options.authUrl);
  const dpop = options.dpop && new DPoPSigner(options.dpop);
  const withKey = () => {
    if (!dpop) throw new TypeError("this client has no DPoP key pair (the dpop option)");
    return dpop;
  };
  let held: { tokens: Tokens; replaceAt: number } | undefined;
  let pending: Promise<Tokens> | undefined;

  const getToken = (): Promise<Tokens> => {
    if (held && Date.now() < held.replaceAt) return Promise.resolve(held.tokens);
    pending ??= (async () => {
      const askedAt = Date.now();
      try {
        const tokens = await flowA(options, dpop);
        const lifetime = tokens.expires_in * 1000;
        held = { tokens, replaceAt: askedAt + lifetime - Math.min((options.refreshBefore ?? 60) * 1000, lifetime / 2) };
        return tokens;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  };

  return {
    getToken,
    async fetch(url, init = {}) {
      const { access_token, token_type } = await getToken();
      const bound = token_type.toLowerCase() === "dpop";
      const headers = new Headers(init.headers);
      headers.set("Authorization", `${bound ? "DPoP" : "Bearer"} ${access_token}`);
      return fetchWithProof(url, { ...init, headers }, bound ? dpop : undefined, access_token);
    },
    dpopProof: (method, url, accessToken) => withKey().proof(method, url, accessToken),
    dpopThumbprint: () => withKey().thumbprint(),
    async getVehicleToken(request) {
      return exchangeForVehicleToken(base, options.clientId, (await getToken()).access_token, request, dpop);
    },
  };
}

async function post<T>(url: string, form: Record<string, string>, dpop?: DPoPSigner): Promise<T> {
  const response = await fetchWithProof(url, { method: "POST", body: new URLSearchParams(form) }, dpop);
  if (!response.ok) throw await KeyfobError.of(response);
  return (await response.json()) as T;
}
