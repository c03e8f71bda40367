/**
 * DPoP (RFC 9449) from the client's side, with the platform's WebCrypto only: proofs signed with
 * the caller's key pair, and the server nonces (RFC 9449 8) each server last sent, so that a token
 * bound to the key (`cnf.jkt`) is worthless to whoever steals it without the key.
 */

/** A DPoP key pair: ECDSA P-256, P-384 or P-521, or Ed25519; its public key must be extractable. */
export type DPoPKeyPair = CryptoKeyPair;

/** A new ES256 key pair for DPoP, its private key not extractable. */
export async function generateDPoPKeyPair(): Promise<DPoPKeyPair> {
  return crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
}

/** The JWS algorithm, the WebCrypto signature parameters and the public JWK's members (RFC 7638 3.2) of a key. */
function algorithmOf(key: CryptoKey): { alg: string; sign: AlgorithmIdentifier | EcdsaParams; members: string[] } {
  const { name, namedCurve } = key.algorithm as EcKeyAlgorithm;
  if (name === "Ed25519") return { alg: "EdDSA", sign: { name }, members: ["crv", "kty", "x"] };
  const bits = { "P-256": "256", "P-384": "384", "P-521": "512" }[name === "ECDSA" ? namedCurve : ""];
  if (!bits) throw new TypeError("a DPoP key pair must be ECDSA (P-256, P-384, P-521) or Ed25519");
  return { alg: `ES${bits}`, sign: { name, hash: `SHA-${bits}` }, members: ["crv", "kty", "x", "y"] };
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const encodeJson = (value: unknown) => base64url(new TextEncoder().encode(JSON.stringify(value)));
const sha256 = async (text: string) => base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));

/** The URL a proof names: without query and fragment (RFC 9449 4.2, htu). */
function htuOf(url: string | URL): string {
  const target = new URL(url);
  target.search = "";
  target.hash = "";
  return target.href;
}

/** The proofs of one key pair, with the last nonce each server (origin) sent. */
export class DPoPSigner {
  private readonly nonces = new Map<string, string>();
  private header?: Promise<{ alg: string; typ: "dpop+jwt"; jwk: Record<string, string> }>;
  private readonly algorithm: ReturnType<typeof algorithmOf>;

  constructor(private readonly keyPair: DPoPKeyPair) {
    this.algorithm = algorithmOf(keyPair.privateKey);
  }

  private jwk() {
    this.header ??= crypto.subtle.exportKey("jwk", this.keyPair.publicKey).then((exported) => {
      const all = exported as Record<string, string>;
      const jwk = Object.fromEntries(this.algorithm.members.map((member) => [member, all[member]]));
      return { alg: this.algorithm.alg, typ: "dpop+jwt" as const, jwk };
    });
    return this.header;
  }

  /** The key's JWK SHA-256 thumbprint (RFC 7638): the `jkt` in the `cnf` of the tokens bound to it. */
  async thumbprint(): Promise<string> {
    const { jwk } = await this.jwk();
    return sha256(JSON.stringify(jwk));
  }

  /**
   * A fresh proof for a request of `method` to `url`; with `accessToken` (a request to an API that
   * the token is for) its hash as `ath`. Carries the nonce the server at `url` last sent, if any.
   */
  async proof(method: string, url: string | URL, accessToken?: string): Promise<string> {
    const header = await this.jwk();
    const nonce = this.nonces.get(new URL(url).origin);
    const payload = {
      jti: crypto.randomUUID(),
      htm: method.toUpperCase(),
      htu: htuOf(url),
      iat: Math.floor(Date.now() / 1000),
      ...(accessToken !== undefined && { ath: await sha256(accessToken) }),
      ...(nonce !== undefined && { nonce }),
    };
    const input = `${encodeJson(header)}.${encodeJson(payload)}`;
    const signature = await crypto.subtle.sign(this.algorithm.sign, this.keyPair.privateKey, new TextEncoder().encode(input));
    return `${input}.${base64url(new Uint8Array(signature))}`;
  }

  /**
   * Keeps the answer's DPoP-Nonce for the next proofs to its server, and says whether the answer
   * asks for a retry with it (use_dpop_nonce: a 400 at a token endpoint, a 401 challenge at an API).
   */
  async remember(url: string | URL, response: Response): Promise<boolean> {
    const nonce = response.headers.get("dpop-nonce");
    if (nonce === null) return false;
    this.nonces.set(new URL(url).origin, nonce);
    if (response.status === 401) return /error="use_dpop_nonce"/.test(response.headers.get("www-authenticate") ?? "");
    if (response.status !== 400) return false;
    const body = await response
      .clone()
      .json()
      .catch(() => undefined);
    return body?.error === "use_dpop_nonce";
  }
}

/**
 * `fetch` with a DPoP proof from `dpop` (if any) in the `DPoP` header, retried once with the
 * server's nonce when it answers use_dpop_nonce. The body must be one that can be sent twice
 * (a string, bytes, URLSearchParams or FormData; not a stream).
 */
export async function fetchWithProof(
  url: string | URL,
  init: RequestInit,
  dpop: DPoPSigner | undefined,
  accessToken?: string,
): Promise<Response> {
  const method = init.method ?? "GET";
  for (let attempt = 1; ; attempt++) {
    const headers = new Headers(init.headers);
    if (dpop) headers.set("DPoP", await dpop.proof(method, url, accessToken));
    const response = await fetch(url, { ...init, method, headers });
    if (!dpop || !(await dpop.remember(url, response)) || attempt === 2) return response;
    await response.body?.cancel();
  }
}
