/** Flow B through the real lib/ functions and route handlers: a registered application, the authorization request, the code exchange. */
import { createHash, randomBytes } from "node:crypto";
import { systemClock } from "@/lib/clock";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { linkWallet, resolveAccount, type LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { addRedirectUri, createClient, rotateClientSecret, updateClient, type ClientSettings } from "@/lib/clients/registry";
import type { Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { ISSUER, registerLicense, requestChallenge, submit } from "./flow-a";
import { route } from "./routes";

const tokenRoute = route("/token");
const userinfoGet = route("/userinfo");

export const FORM = { "content-type": "application/x-www-form-urlencoded" };

/** A registered client; a public one uses PKCE with its own verifier unless a test says otherwise. */
export type App = { clientId: string; redirectUri: string; secret?: string; pkce: { verifier: string; challenge: string } };

/** Registered through `on` (default: the process-wide instance), with `settings` (refresh tokens, resource server) when given. */
export async function registerApp(
  options: { confidential?: boolean; redirectUri?: string; settings?: Partial<ClientSettings>; on?: Keyfob } = {},
): Promise<App> {
  const { store } = options.on ?? keyfob();
  const client = await createClient(store, { name: "Fleet dashboard" });
  const redirectUri = options.redirectUri ?? `https://fleet.example.com/cb/${client.id.slice(3, 9)}?tenant=7`;
  await addRedirectUri(store, client.id, redirectUri);
  if (options.settings) await updateClient(store, client.id, options.settings);
  const secret = options.confidential ? await rotateClientSecret({ store, clock: systemClock }, client.id) : undefined;
  return { clientId: client.id, redirectUri, secret, pkce: pkce() };
}

export function authorizeQuery(app: App, extra: Record<string, string> = {}) {
  const pkceParams: Record<string, string> =
    app.secret || "code_challenge" in extra ? {} : { code_challenge: app.pkce.challenge, code_challenge_method: "S256" };
  return new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: "openid email",
    response_type: "code",
    ...pkceParams,
    ...extra,
  });
}

export const google = (subject = randomBytes(8).toString("hex")): LoginIdentity => ({
  provider: "google",
  subject,
  email: `${subject}@example.com`,
  emailVerified: true,
});

/** Who asks /account for a change that needs a strong, recent login: a session whose Google login was just now. */
export const signedInNow = (ip?: string) => ({ login: { amr: ["google"], authTime: new Date() }, ip });

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Runs the authorization request and logs `identity` in on `on` (default: the process-wide instance); returns the redirect's parameters. */
export async function authorize(app: App, identity: LoginIdentity = google(), extra: Record<string, string> = {}, on: Keyfob = keyfob()) {
  const start = await startAuthorization(on, authorizeQuery(app, { state: "st-1", nonce: "n-1", ...extra }));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  return new URL((await completeAuthorization(on, start.interactionId, { identity })).location);
}

/** POST /token: the code exchange (or another grant through `params`), authenticated as the app is. */
export function token(app: App, params: Record<string, string>, auth: "basic" | "post" | "none" = app.secret ? "basic" : "none") {
  return tokenRoute(tokenRequest(app, params, auth));
}

/** The request `token` sends, for a route handler of another instance. */
export function tokenRequest(
  app: App,
  params: Record<string, string>,
  auth: "basic" | "post" | "none" = app.secret ? "basic" : "none",
): Request {
  const headers: Record<string, string> = { ...FORM };
  const verifier: Record<string, string> = app.secret || "code_verifier" in params ? {} : { code_verifier: app.pkce.verifier };
  const form = new URLSearchParams({ grant_type: "authorization_code", redirect_uri: app.redirectUri, ...verifier, ...params });
  if (auth === "basic") headers.authorization = basic(app);
  else form.set("client_id", app.clientId);
  if (auth === "post") form.set("client_secret", app.secret!);
  return new Request(`${ISSUER}/token`, { method: "POST", headers, body: form });
}

/** HTTP Basic credentials of a confidential app (RFC 6749 2.3.1: each part form-encoded). */
export const basic = (app: App) =>
  `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.secret!)}`).toString("base64")}`;

export const userinfo = (accessToken: string) =>
  userinfoGet(new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }));

/** A Google user who logged in to an application on the serving instance: its session, tokens, and a linked wallet with a Flow A token. */
export async function activeUser() {
  const app = await registerApp();
  const identity = google();
  const start = await startAuthorization(keyfob(), authorizeQuery(app));
  if (start.kind !== "login") throw new Error("expected the login page");
  const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity });
  const tokens = await (await token(app, { code: new URL(location).searchParams.get("code")! })).json();
  const accountId = await resolveAccount(keyfob(), identity);
  const license = await registerLicense();
  const wallet = privateKeyToAccount(generatePrivateKey());
  await linkWallet(keyfob(), accountId, wallet.address);
  const challenge = await requestChallenge(license, { address: wallet.address });
  const walletTokens = await (await submit(license, challenge.state, await wallet.signMessage({ message: challenge.challenge }))).json();
  return { app, identity, accountId, session: newSession!, tokens, license, wallet, walletTokens };
}
