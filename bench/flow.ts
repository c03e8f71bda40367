/**
 * What one virtual client does, over node:http with keep-alive, timed: a Flow A handshake
 * (generate_challenge, EIP-191 signing, submit_challenge) step by step, a Flow B code exchange
 * (POST /token with a pre-minted code and its PKCE verifier), or a vehicle token exchange (RFC 8693,
 * POST /token with a developer token). Shared by the load workers and the preflight.
 */
import http from "node:http";
import type { PrivateKeyAccount } from "viem/accounts";

/** What a virtual client needs to know about the server it logs in to. */
export type FlowTarget = {
  /** Base URL, without a trailing slash. */
  url: string;
  clientId: string;
  /** A redirect URI registered for the client ("domain" in Flow A). */
  domain: string;
  /** The address the tokens are for (the license itself when a signer signs for it). */
  address: string;
  scope: string;
};

export type HandshakeTiming = {
  /** Milliseconds, measured with performance.now(). */
  generate: number;
  sign: number;
  submit: number;
  total: number;
};

/** An authorization server's /token for a public client (PKCE S256, no secret). */
export type TokenTarget = {
  url: string;
  clientId: string;
  redirectUri: string;
};

/** A developer license's /token for vehicle tokens: its Flow A developer tokens are exchanged (RFC 8693). */
export type VehicleTarget = {
  url: string;
  /** The license's 0x address. */
  clientId: string;
  /** The privileges asked for, as the scope names them. */
  scope: string;
};

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

type Step = "generate" | "submit" | "token";

/** A failed request: the step, and the HTTP status with the OAuth error code, or a network error. */
export class FlowError extends Error {
  constructor(
    readonly step: Step,
    readonly kind: string,
    detail: string,
  ) {
    super(`${step}: ${kind}${detail ? ` (${detail})` : ""}`);
    this.name = "FlowError";
  }
}

export function createAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** A Flow A handshake, timed; `accessToken` the token it ended with (a developer token when the address is a license's). */
export async function handshake(
  target: FlowTarget,
  account: PrivateKeyAccount,
  agent: http.Agent,
): Promise<{ timing: HandshakeTiming; accessToken: string }> {
  const t0 = performance.now();
  const challenge = await postForm(agent, `${target.url}/auth/web3/generate_challenge`, "generate", {
    client_id: target.clientId,
    domain: target.domain,
    scope: target.scope,
    response_type: "code",
    address: target.address,
  });
  const t1 = performance.now();
  if (typeof challenge.state !== "string" || typeof challenge.challenge !== "string") {
    throw new FlowError("generate", "200 bad_body", "no state or challenge in the response");
  }
  const signature = await account.signMessage({ message: challenge.challenge });
  const t2 = performance.now();
  const tokens = await postForm(agent, `${target.url}/auth/web3/submit_challenge`, "submit", {
    client_id: target.clientId,
    state: challenge.state,
    grant_type: "authorization_code",
    domain: target.domain,
    signature,
  });
  const t3 = performance.now();
  if (typeof tokens.access_token !== "string" || typeof tokens.id_token !== "string") {
    throw new FlowError("submit", "200 bad_body", "no access_token or id_token in the response");
  }
  return { timing: { generate: t1 - t0, sign: t2 - t1, submit: t3 - t2, total: t3 - t0 }, accessToken: tokens.access_token };
}

/** Exchanges a pre-minted code for tokens (authorization_code grant, PKCE S256); resolves with the time taken in ms. */
export async function exchange(target: TokenTarget, code: string, verifier: string, agent: http.Agent): Promise<number> {
  const t0 = performance.now();
  const tokens = await postForm(agent, `${target.url}/token`, "token", {
    grant_type: "authorization_code",
    code,
    redirect_uri: target.redirectUri,
    client_id: target.clientId,
    code_verifier: verifier,
  });
  if (typeof tokens.access_token !== "string" || typeof tokens.id_token !== "string") {
    throw new FlowError("token", "200 bad_body", "no access_token or id_token in the response");
  }
  return performance.now() - t0;
}

/** Exchanges a developer token for a token for the vehicle `resource` names (RFC 8693); resolves with the time taken in ms. */
export async function vehicleExchange(target: VehicleTarget, subjectToken: string, resource: string, agent: http.Agent): Promise<number> {
  const t0 = performance.now();
  const tokens = await postForm(agent, `${target.url}/token`, "token", {
    grant_type: TOKEN_EXCHANGE_GRANT,
    client_id: target.clientId,
    subject_token: subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    resource,
    scope: target.scope,
  });
  if (typeof tokens.access_token !== "string" || tokens.issued_token_type !== ACCESS_TOKEN_TYPE) {
    throw new FlowError("token", "200 bad_body", "no access_token or issued_token_type in the response");
  }
  return performance.now() - t0;
}

/** POSTs a form and parses the JSON answer; anything but a 200 with a JSON body is a FlowError. */
export function postForm(
  agent: http.Agent,
  url: string,
  step: Step,
  form: Record<string, string>,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => reject(new FlowError(step, "network", error.message)));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: Record<string, unknown> | undefined;
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = undefined;
          }
          if (response.statusCode === 200 && json) return resolve(json);
          const code = typeof json?.error === "string" ? json.error : "non_json";
          const description = typeof json?.error_description === "string" ? json.error_description : text.slice(0, 120);
          reject(new FlowError(step, `${response.statusCode} ${code}`, description));
        });
      },
    );
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on("error", (error: NodeJS.ErrnoException) => reject(new FlowError(step, `network ${error.code ?? "error"}`, error.message)));
    request.end(body);
  });
}
