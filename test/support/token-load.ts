/**
 * Token load on Keyfob instances in processes of their own, for the fault tests
 * (test/durable-audit.test.ts, test/ha-failover.once.test.ts): concurrent clients run Flow A
 * handshakes (generate_challenge, then submit_challenge), and exchange codes minted as the hosted
 * login leaves them at /token, then refresh the tokens twice. Every answer (or request that got
 * none) is kept with its time, and every access token a client received with the request that got
 * it. The clients do what a balancer in front of the instances does: a request that cannot reach
 * one instance (nothing sent) goes to the next; one that was sent is never sent again.
 */
import { createHash, randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import type pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addRedirectUri, createClient, updateClient } from "@/lib/clients/registry";
import { opaqueDigest, randomOpaque } from "@/lib/oauth/opaque";
import { createStore } from "@/lib/store";
import { type ProtocolProcess, startProtocolProcess } from "./protocol-process";

/** One answer (status) or a request that got none (error: the network error's code). */
export type Outcome = { at: number; instance: number; path: string; status: number; retryAfter?: string | null; error?: string };
/** A request, to send again. */
export type Sent = { path: string; form: Record<string, string> };
/** A token a client received, what it was redeemed from, when (asked for: `sent`; received: `at`), from which instance, and the request that redeemed it. */
export type Received = {
  jti: string;
  kid?: string;
  clientId: string;
  account: string;
  from: string;
  sent: number;
  at: number;
  instance: number;
  request: Sent;
};
export type Answer = { status: number; body: Record<string, string>; retryAfter: string | null };

/** The load's clients, on a migrated database: a license (Flow A) and an app allowed refresh tokens, both with `redirectUri`. */
export async function registerLoadClients(databaseUrl: string, redirectUri: string): Promise<{ licenseId: string; appId: string }> {
  const store = createStore(databaseUrl, 2);
  try {
    const license = privateKeyToAccount(generatePrivateKey());
    const licenseId = (await createClient(store, { id: license.address, name: "Load test license" })).id;
    await addRedirectUri(store, licenseId, redirectUri);
    const appId = (await createClient(store, { name: "Load test app" })).id;
    await addRedirectUri(store, appId, redirectUri);
    await updateClient(store, appId, { refreshTokensAllowed: true });
    return { licenseId, appId };
  } finally {
    await store.close();
  }
}

/** Two instances on `databaseUrl` sharing `secret`, with no rate limit in the load's way (the load's clients are public); `env` adds settings. */
export function startLoadInstances(
  databaseUrl: string,
  secret: string,
  issuer: string,
  env: Record<string, string> = {},
): Promise<ProtocolProcess[]> {
  return Promise.all(
    [0, 1].map(() =>
      startProtocolProcess({
        DATABASE_URL: databaseUrl,
        KEYFOB_SECRET: secret,
        ISSUER_URL: issuer,
        RATE_LIMIT_PER_IP: "off",
        RATE_LIMIT_PER_CLIENT: "100000000/1m",
        ...env,
      }),
    ),
  );
}

/** Codes as the hosted login leaves them, each for an account of its own (created here), with offline_access: [code, verifier, account]. */
export async function mintCodes(pool: pg.Pool, n: number, clientId: string, redirectUri: string): Promise<[string, string, string][]> {
  const codes: [string, string, string][] = Array.from({ length: n }, () => [
    randomOpaque(),
    randomBytes(32).toString("base64url"),
    `0x${randomBytes(20).toString("hex")}`,
  ]);
  await pool.query(
    `WITH accounts AS (INSERT INTO accounts (id) SELECT unnest($3::text[]))
     INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, account_id, connector, scope, code_challenge, email, email_verified, auth_time, amr, expires_at)
     SELECT h, $4, $5, a, 'google', 'openid email offline_access', c, 'user@example.com', true, now() AT TIME ZONE 'UTC', 'google', (now() + interval '10 minutes') AT TIME ZONE 'UTC'
     FROM unnest($1::text[], $2::text[], $3::text[]) AS t(h, c, a)`,
    [
      codes.map(([code]) => opaqueDigest(code)),
      codes.map(([, verifier]) => createHash("sha256").update(verifier).digest("base64url")),
      codes.map(([, , account]) => account),
      clientId,
      redirectUri,
    ],
  );
  return codes;
}

export type LoadOptions = {
  /** The instances' base URLs. */
  instances: { url: string }[];
  /** A license (Flow A client) and an app with refresh tokens allowed, both with `redirectUri` registered. */
  licenseId: string;
  appId: string;
  redirectUri: string;
  /** Codes for `appId` (mintCodes); taken from the end. */
  codes: [string, string, string][];
  /** Concurrent clients of each kind (default 6). */
  clients?: number;
};

export type Load = {
  outcomes: Outcome[];
  received: Received[];
  /** Milliseconds since the load started. */
  now(): number;
  /** Sends `request` once, to instance `index` (not counted in `outcomes`). */
  send(index: number, request: Sent): Promise<Answer>;
  /** Stops the clients and waits for their requests in flight. */
  stop(): Promise<void>;
};

export function startTokenLoad({ instances, licenseId, appId, redirectUri, codes, clients = 6 }: LoadOptions): Load {
  const outcomes: Outcome[] = [];
  const received: Received[] = [];
  const started = performance.now();
  const now = () => performance.now() - started;
  let stopped = false;
  let turn = 0;

  const send = async (index: number, { path, form }: Sent): Promise<Answer> => {
    const response = await fetch(`${instances[index].url}${path}`, { method: "POST", body: new URLSearchParams(form) });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, string>,
      retryAfter: response.headers.get("retry-after"),
    };
  };

  /** POSTs a form to one instance, or to the next when the first cannot be reached; undefined when no answer came. */
  async function post(path: string, form: Record<string, string>): Promise<(Answer & { instance: number; sent: number }) | undefined> {
    const first = turn++ % instances.length;
    for (let i = 0; i < instances.length; i++) {
      const index = (first + i) % instances.length;
      try {
        const sent = now();
        const answer = await send(index, { path, form });
        outcomes.push({ at: now(), instance: index, path, status: answer.status, retryAfter: answer.retryAfter });
        return { ...answer, instance: index, sent };
      } catch (error) {
        const code = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name);
        outcomes.push({ at: now(), instance: index, path, status: 0, error: code });
        if (code !== "ECONNREFUSED") return undefined; // it may have been handled: never sent twice
      }
    }
    return undefined;
  }
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const keep = (
    { body, instance, sent }: Answer & { instance: number; sent: number },
    clientId: string,
    account: string,
    from: string,
    request: Sent,
  ) => {
    const claims = decodeJwt(body.access_token);
    const [header] = body.access_token.split(".");
    const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid?: string };
    received.push({ jti: claims.jti!, kid, clientId, account, from, sent, at: now(), instance, request });
  };

  async function flowA() {
    while (!stopped) {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const challenge = await post("/auth/web3/generate_challenge", {
        client_id: licenseId,
        domain: redirectUri,
        scope: "openid email",
        response_type: "code",
        address: wallet.address,
      });
      if (challenge?.status !== 200) {
        await pause(100);
        continue;
      }
      const signature = await wallet.signMessage({ message: challenge.body.challenge });
      const request = {
        path: "/auth/web3/submit_challenge",
        form: { client_id: licenseId, state: challenge.body.state, grant_type: "authorization_code", domain: redirectUri, signature },
      };
      const tokens = await post(request.path, request.form);
      if (tokens?.status === 200) keep(tokens, licenseId, wallet.address, `state ${challenge.body.state}`, request);
      else await pause(100);
    }
  }

  async function codeExchanges() {
    while (!stopped && codes.length > 0) {
      const [code, verifier, account] = codes.pop()!;
      const request = {
        path: "/token",
        form: { grant_type: "authorization_code", client_id: appId, code, code_verifier: verifier, redirect_uri: redirectUri },
      };
      const tokens = await post(request.path, request.form);
      if (tokens?.status !== 200) {
        await pause(100);
        continue;
      }
      keep(tokens, appId, account, `code ${code}`, request);
      let refreshToken = tokens.body.refresh_token;
      for (let i = 0; i < 2 && !stopped; i++) {
        const refresh = { path: "/token", form: { grant_type: "refresh_token", client_id: appId, refresh_token: refreshToken } };
        const refreshed = await post(refresh.path, refresh.form);
        if (refreshed?.status !== 200) break;
        keep(refreshed, appId, account, `refresh token ${refreshToken}`, refresh);
        refreshToken = refreshed.body.refresh_token;
      }
    }
  }

  const running = [...Array.from({ length: clients }, flowA), ...Array.from({ length: clients }, codeExchanges)];
  return {
    outcomes,
    received,
    now,
    send,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}
