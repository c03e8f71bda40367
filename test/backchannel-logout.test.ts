/**
 * OpenID Connect Back-Channel Logout 1.0, received by a small relying party (node:http on a port of
 * its own) that verifies each logout token against Keyfob's JWKS, as an RP must (2.6): RP-initiated
 * logout, a session running out (idle or at its maximum age), an admin's session revocation,
 * blocking and deleting an account each deliver a token to every client that got tokens in the
 * ended session, and to no other; an RP that is down at first
 * gets it once it is back; a token an RP refuses is given up and audited; and when the instance
 * delivering is killed (SIGKILL) mid-delivery, another instance delivers once the claim lapses.
 */
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { deleteAccount } from "@/lib/accounts/directory";
import { startAuthorization } from "@/lib/actions/authorize";
import { performAdminChange } from "@/lib/admin/changes";
import { beginAdminLogin, finishAdminLogin } from "@/lib/admin/session";
import { DEVICE_CODE_GRANT } from "@/lib/actions/device-code";
import { updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { confirmUserCode } from "@/lib/device/verification";
import { openidConfiguration } from "@/lib/discovery";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { sweepExpired } from "@/lib/housekeeping";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { LEASE_MS } from "@/lib/sessions/backchannel-logout";
import { endSession, findSession, revokeSessions } from "@/lib/sessions/login-session";
import { BACKCHANNEL_LOGOUT_EVENT } from "@/lib/tokens/logout-token";
import { freePort } from "../scripts/free-port";
import { cli } from "./support/cli";
import { isolatedDatabase, tables } from "./support/database";
import { LOOPBACK_NETWORKS, sessionWith, TestRp, until } from "./support/backchannel";
import { ISSUER } from "./support/flow-a";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";
import { authorizeQuery, FORM, google, registerApp, tokenRequest, type App } from "./support/flow-b";
import { route } from "./support/routes";

const deviceAuthorizationRoute = route("/device/authorization");
const tokenRoute = route("/token");

// Before any Keyfob is built: this file's instances, its command-line runs and protocol processes deliver to the RPs on loopback.
process.env.BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS = LOOPBACK_NETWORKS;

let rp: TestRp;
let k: Keyfob;
let adminToken: string;
const adminWallet = privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  rp = new TestRp(await freePort(), () => keyfob());
  await rp.start();
  // The process-wide instance delivers (test/support/global-setup.ts leaves delivery off in the other files).
  keyfob().logouts.start();
  // An instance whose configuration makes a wallet an admin, on the shared store.
  k = createKeyfob(loadConfig({ ...process.env, ADMIN_ADDRESSES: adminWallet.toLowerCase() }), keyfob().store);
  const { location, cookie } = await beginAdminLogin(k);
  const start = await startAuthorization(k, new URL(location).searchParams);
  if (start.kind !== "login") throw new Error("admin login did not reach the login page");
  const identity: LoginIdentity = { provider: "web3", subject: adminWallet, emailVerified: false };
  const callback = new URL((await completeAuthorization(k, start.interactionId, { identity })).location);
  adminToken = (await finishAdminLogin(k, cookie, callback.searchParams))!;
});

afterAll(async () => {
  await rp.stop();
});

/** A client with its back-channel logout URI at the RP, set through the admin action (as the dashboard, CLI and API do). */
async function rpClient(on: Keyfob = keyfob()): Promise<App> {
  const app = await registerApp({ on });
  const result = await performAdminChange(k, adminToken, "client.update", {
    clientId: app.clientId,
    backchannelLogoutUri: rp.uri(app.clientId),
    backchannelLogoutSessionRequired: "true",
  });
  expect(result).toMatchObject({ ok: true });
  return app;
}

const pending = (clientIds: string[]) => tables(keyfob()).backchannelLogout.count({ where: { clientId: { in: clientIds } } });

/** The apps that should hear of the end: each got one logout token for the session, with its sub and sid; the others none. */
async function expectDelivered(ended: Awaited<ReturnType<typeof sessionWith>>, told: App[], untold: App[]) {
  await until(
    async () => (await pending(told.map((a) => a.clientId))) === 0 && told.every((a) => rp.to(a.clientId).length > 0),
    10_000,
    "the logout tokens",
  );
  for (const app of told) {
    const [claims, ...more] = rp.to(app.clientId);
    expect(more).toEqual([]);
    const idToken = ended.idTokens.get(app.clientId)!;
    expect(idToken.sid).toEqual(expect.any(String));
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: app.clientId,
      sub: idToken.sub,
      sid: idToken.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    expect(claims).not.toHaveProperty("nonce");
    expect(claims.exp! - claims.iat!).toBe(120);
    expect(claims.jti).toEqual(expect.any(String));
  }
  // Give a wrongly queued token time to arrive before saying none did.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (const app of untold) expect(rp.to(app.clientId)).toEqual([]);
}

describe("back-channel logout", () => {
  it("is in discovery, and ID tokens from a session carry its sid", async () => {
    expect(openidConfiguration({ issuerUrl: ISSUER, vehicleTokenIssuer: ISSUER })).toMatchObject({
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
    const app = await rpClient();
    const { idTokens } = await sessionWith([app]);
    expect(idTokens.get(app.clientId)!.sid).toMatch(/^[\w-]{43}$/);
  });

  it("refuses a back-channel logout URI that is not https (or http on localhost), or has a fragment", async () => {
    const app = await registerApp();
    for (const uri of ["http://rp.example.com/logout", "https://rp.example.com/logout#x", "ftp://rp.example.com/", "logout"]) {
      expect(await performAdminChange(k, adminToken, "client.update", { clientId: app.clientId, backchannelLogoutUri: uri })).toMatchObject(
        {
          ok: false,
          status: 400,
          fieldErrors: { backchannelLogoutUri: expect.stringMatching(/back-channel logout URI/) },
        },
      );
    }
    await updateClient(keyfob().store, app.clientId, { backchannelLogoutUri: "https://rp.example.com/logout" });
    expect((await tables(keyfob()).client.findUnique({ where: { id: app.clientId } }))?.backchannelLogoutUri).toBe(
      "https://rp.example.com/logout",
    );
    expect(await performAdminChange(k, adminToken, "client.update", { clientId: app.clientId, backchannelLogoutUri: "" })).toMatchObject({
      ok: true,
    });
    expect((await tables(keyfob()).client.findUnique({ where: { id: app.clientId } }))?.backchannelLogoutUri).toBeNull();
  });

  it("is set by the command line, whose blocking of an account is delivered by a running instance", { timeout: 90_000 }, async () => {
    const app = await registerApp();
    const set = await cli(
      "clients",
      "set",
      app.clientId,
      "--backchannel-logout-uri",
      rp.uri(app.clientId),
      "--backchannel-logout-session-required",
      "yes",
    );
    expect(set).toMatchObject({ code: 0 });
    expect(set.stdout).toContain(`"backchannelLogoutUri":"${rp.uri(app.clientId)}"`);
    expect((await cli("clients", "list")).stdout).toContain(`back-channel  ${rp.uri(app.clientId)}  (sid required)`);
    const ended = await sessionWith([app]);
    // The command line only queues the token (it runs no worker); this process's instance sends it.
    expect(await cli("accounts", "block", ended.accountId)).toMatchObject({ code: 0 });
    await expectDelivered(ended, [app], []);
  });

  it("RP-initiated logout tells every client that got tokens in the session, and no other", async () => {
    const [a, b, elsewhere] = [await rpClient(), await rpClient(), await rpClient()];
    const withoutUri = await registerApp();
    const identity = google();
    const ended = await sessionWith([a, b, withoutUri], identity);
    // The same user's other session, with another client: it goes on.
    const other = await sessionWith([elsewhere], identity);
    expect(await endSession(keyfob(), ended.token)).toBe(true);
    await expectDelivered(ended, [a, b], [elsewhere]);
    expect(await findSession(keyfob(), other.token)).toBeDefined();
    const audit = await tables(keyfob()).auditEvent.findMany({
      where: { action: "logout.backchannel", clientId: { in: [a.clientId, b.clientId] } },
    });
    expect(audit.map((e) => e.outcome)).toEqual(["success", "success"]);
  });

  it("a code redeemed after its session ended: the client is told at once", async () => {
    const app = await rpClient();
    const identity = google();
    const start = await startAuthorization(keyfob(), authorizeQuery(app));
    if (start.kind !== "login") throw new Error("expected the login page");
    const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity });
    expect(await endSession(keyfob(), newSession!.token)).toBe(true);
    const request = tokenRequest(app, { code: new URL(location).searchParams.get("code")! });
    const response = await (await route("/token")(request)).json();
    const idToken = decodeJwt(response.id_token);
    await until(() => rp.to(app.clientId).length > 0, 10_000, "the logout token");
    expect(rp.to(app.clientId)).toMatchObject([{ aud: app.clientId, sub: idToken.sub, sid: idToken.sid }]);
  });

  it("a session that runs out, idle or at its maximum age, tells its clients at the next sweep", async () => {
    const [idle, aged, live] = [await rpClient(), await rpClient(), await rpClient()];
    const idleSession = await sessionWith([idle]);
    const agedSession = await sessionWith([aged]);
    const liveSession = await sessionWith([live]);
    const now = new Date();
    const { sessionIdleTtl } = keyfob().config;
    await tables(keyfob()).loginSession.update({
      where: { idHash: idleSession.session.id },
      data: { lastSeenAt: new Date(now.getTime() - sessionIdleTtl * 1000 - 1000) },
    });
    await tables(keyfob()).loginSession.update({
      where: { idHash: agedSession.session.id },
      data: { expiresAt: new Date(now.getTime() - 1000) },
    });
    await sweepExpired(keyfob().store, keyfob().config, now);
    await expectDelivered(idleSession, [idle], [live]);
    await expectDelivered(agedSession, [aged], [live]);
    expect(await findSession(keyfob(), liveSession.token)).toBeDefined();
    // Told once: the next sweep finds them ended.
    await sweepExpired(keyfob().store, keyfob().config, new Date());
    expect(await pending([idle.clientId, aged.clientId])).toBe(0);
  });

  it("an admin's revocation of one session tells that session's clients", async () => {
    const [a, b] = [await rpClient(), await rpClient()];
    const identity = google();
    const ended = await sessionWith([a], identity);
    const kept = await sessionWith([b], identity);
    expect(
      await performAdminChange(k, adminToken, "session.revoke", { accountId: ended.accountId, sessionId: ended.session.id }),
    ).toMatchObject({ ok: true });
    await expectDelivered(ended, [a], [b]);
    expect(await findSession(keyfob(), kept.token)).toBeDefined();
  });

  it("blocking an account tells the clients of each of its sessions", async () => {
    const [a, b, stranger] = [await rpClient(), await rpClient(), await rpClient()];
    const identity = google();
    const first = await sessionWith([a], identity);
    const second = await sessionWith([b], identity);
    await sessionWith([stranger]);
    expect(await performAdminChange(k, adminToken, "account.block", { accountId: first.accountId })).toMatchObject({ ok: true });
    await expectDelivered(first, [a], [stranger]);
    await expectDelivered(second, [b], []);
  });

  it("deleting an account and signing out everywhere tell the clients of its sessions", async () => {
    const [a, b] = [await rpClient(), await rpClient()];
    const deleted = await sessionWith([a]);
    expect(await deleteAccount(keyfob(), deleted.accountId)).toBeDefined();
    await expectDelivered(deleted, [a], []);
    const everywhere = await sessionWith([b]);
    expect(await revokeSessions(keyfob(), everywhere.accountId)).toBe(1);
    await expectDelivered(everywhere, [b], []);
  });

  it("a device approved on a phone: its ID token carries the phone's session, whose end tells the device's client", async () => {
    const device = await rpClient();
    await updateClient(keyfob().store, device.clientId, { deviceFlow: true });
    const web = await rpClient();
    const post = (path: string, route: (r: Request) => Promise<Response>, form: Record<string, string>) =>
      route(
        new Request(`${ISSUER}${path}`, {
          method: "POST",
          headers: FORM,
          body: new URLSearchParams({ client_id: device.clientId, ...form }),
        }),
      );
    const started = await (await post("/device/authorization", deviceAuthorizationRoute, { scope: "openid" })).json();
    // On the phone: the code, then a login, which starts the session; the same browser then signs in to another client.
    const interactionId = await confirmUserCode(keyfob(), started.user_code, { ip: "203.0.113.40" });
    const identity = google();
    const { newSession } = await completeAuthorization(keyfob(), interactionId, { identity });
    const polled = await post("/token", tokenRoute, { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code });
    expect(polled.status).toBe(200);
    const session = (await findSession(keyfob(), newSession!.token))!;
    const idTokens = new Map([[device.clientId, decodeJwt((await polled.json()).id_token)]]);
    const kept = await sessionWith([web], identity);
    expect(await endSession(keyfob(), newSession!.token)).toBe(true);
    await expectDelivered({ token: newSession!.token, session, idTokens, accountId: session.accountId }, [device], [web]);
    expect(await findSession(keyfob(), kept.token)).toBeDefined();
  });

  it("an RP that is down at first gets the token once it is back, after a retry", async () => {
    const down = new TestRp(await freePort(), () => keyfob());
    const app = await registerApp();
    await updateClient(keyfob().store, app.clientId, { backchannelLogoutUri: down.uri(app.clientId) }, keyfob().config);
    const ended = await sessionWith([app]);
    expect(await endSession(keyfob(), ended.token)).toBe(true);
    const failed = async () => (await tables(keyfob()).backchannelLogout.findFirst({ where: { clientId: app.clientId } }))?.lastError;
    await until(async () => Boolean(await failed()), 5_000, "a failed attempt");
    expect(await failed()).toMatch(/unreachable \(ECONNREFUSED\)/);
    // Then it answers 503 once (retried too), then 200.
    down.behaviour = 503;
    await down.start();
    try {
      await until(() => down.requests >= 1, 15_000, "the second attempt");
      down.behaviour = 200;
      await until(async () => (await pending([app.clientId])) === 0, 20_000, "the delivery");
      expect(down.to(app.clientId).at(-1)).toMatchObject({ aud: app.clientId, sid: ended.idTokens.get(app.clientId)!.sid });
    } finally {
      await down.stop();
    }
  }, 60_000);

  it("gives up, audited, a token the RP refuses (400)", async () => {
    const app = await rpClient();
    const ended = await sessionWith([app]);
    rp.behaviour = 400;
    try {
      expect(await endSession(keyfob(), ended.token)).toBe(true);
      await until(async () => rp.to(app.clientId).length === 1 && (await pending([app.clientId])) === 0, 10_000, "the refusal");
      await keyfob().audit.flush();
      const audit = await tables(keyfob()).auditEvent.findMany({ where: { action: "logout.backchannel", clientId: app.clientId } });
      expect(audit).toMatchObject([{ outcome: "delivery_failed", detail: expect.stringMatching(/given up after 1 attempts: HTTP 400/) }]);
    } finally {
      rp.behaviour = 200;
    }
  });
});

describe("back-channel logout across instances", () => {
  const instances: ProtocolProcess[] = [];
  let isolated: Keyfob;

  beforeAll(async () => {
    const store = await isolatedDatabase("backchannel_logout");
    isolated = createKeyfob(loadConfig({ ...process.env, DATABASE_URL: databaseUrl("backchannel_logout") }), store);
    await isolated.keys.signingKey();
  }, 60_000);

  afterAll(async () => {
    for (const instance of instances) instance.child.kill("SIGKILL");
    await Promise.all(instances.map((i) => i.exited));
    await isolated?.close();
    await isolated?.store.close();
  });

  function databaseUrl(name: string) {
    const base = new URL(process.env.DATABASE_URL!);
    base.pathname = `/${name}`;
    return base.toString();
  }

  /** A Keyfob instance in a process of its own on the isolated database: it runs a delivery worker. */
  async function startInstance(): Promise<ProtocolProcess> {
    const instance = await startProtocolProcess({ DATABASE_URL: databaseUrl("backchannel_logout"), BACKCHANNEL_LOGOUT_DELIVERY: "true" });
    instances.push(instance);
    return instance;
  }

  it("an instance killed mid-delivery: another delivers once its claim lapses", async () => {
    const app = await registerApp({ on: isolated });
    const hanging = new TestRp(await freePort(), () => isolated);
    await updateClient(isolated.store, app.clientId, { backchannelLogoutUri: hanging.uri(app.clientId) }, isolated.config);
    hanging.behaviour = "hang";
    await hanging.start();
    try {
      const ended = await sessionWith([app], google(), isolated);
      const first = await startInstance();
      expect(await endSession(isolated, ended.token)).toBe(true);
      await until(() => hanging.requests === 1, 15_000, "the first instance's delivery");
      first.child.kill("SIGKILL");
      await first.exited;
      const killedAt = Date.now();
      hanging.behaviour = 200;
      await startInstance();
      await until(
        async () => (await tables(isolated).backchannelLogout.count()) === 0,
        LEASE_MS + 20_000,
        "the second instance's delivery",
      );
      // Not before the first instance's claim lapsed (it was taken before the kill).
      expect(Date.now() - killedAt).toBeGreaterThan(LEASE_MS - 5_000);
      expect(hanging.to(app.clientId)).toMatchObject([{ aud: app.clientId, sid: ended.idTokens.get(app.clientId)!.sid }]);
      expect(hanging.requests).toBe(2);
    } finally {
      await hanging.stop();
    }
  }, 90_000);
});
