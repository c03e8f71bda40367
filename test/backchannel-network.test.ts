/**
 * Back-channel logout must not be a way to make Keyfob send requests into its own machine or
 * network (security review round 3, item 6). Registration, through the admin action that the
 * dashboard, the command line and the management API share, refuses URIs on loopback, private,
 * link-local, shared, unique-local and metadata hosts, and plain http under an https issuer; and
 * delivery, on a database of its own, sends nothing to a relying party on loopback unless
 * BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS allows it, giving the token up with an audit record that
 * names no address or port. What a host name resolves to, and DNS rebinding, are
 * lib/http/outbound.test.ts (DNS cannot be controlled here).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, type Admin } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { endSession } from "@/lib/sessions/login-session";
import { freePort } from "../scripts/free-port";
import { INTERNAL_URIS, LOOPBACK_NETWORKS, sessionWith, TestRp } from "./support/backchannel";
import { emptyDatabase, tables } from "./support/database";
import { google, registerApp } from "./support/flow-b";

const admin: Admin = { accountId: "0x0000000000000000000000000000000000000001", label: "backchannel-network-test", scopes: ALL_SCOPES };

describe("registering a back-channel logout URI under an https issuer", () => {
  const instances: Keyfob[] = [];
  const on = (env: Record<string, string>) => {
    const k = createKeyfob(loadConfig({ ...process.env, ISSUER_URL: "https://id.example.com", ...env }), keyfob().store);
    instances.push(k);
    return k;
  };
  afterAll(() => Promise.all(instances.map((k) => k.close())));

  const set = (k: Keyfob, clientId: string, backchannelLogoutUri: string) =>
    runAdminChange(k, admin, "client.update", { clientId, backchannelLogoutUri });
  const refused = (problem: RegExp) => ({ ok: false, status: 400, fieldErrors: { backchannelLogoutUri: expect.stringMatching(problem) } });
  const stored = async (clientId: string) =>
    (await tables(keyfob()).client.findUniqueOrThrow({ where: { id: clientId } })).backchannelLogoutUri;

  it("refuses the review's URIs and other internal hosts, and http; takes a public https URI", async () => {
    const k = on({});
    const app = await registerApp();
    for (const uri of INTERNAL_URIS.filter((u) => u.startsWith("http:")))
      expect(await set(k, app.clientId, uri), uri).toMatchObject(refused(/^back-channel logout URI must use https, as the issuer does$/));
    for (const uri of [
      ...INTERNAL_URIS.filter((u) => u.startsWith("https:")),
      "https://localhost:8443/logout",
      "https://[::ffff:127.0.0.1]/logout",
      "https://100.100.100.200/latest/meta-data/",
      "https://metadata.goog/computeMetadata/v1/",
      "https://0.0.0.0:8443/logout",
    ])
      expect(await set(k, app.clientId, uri), uri).toMatchObject(
        refused(/^back-channel logout URI must be on a public host: not a loopback/),
      );
    expect(await stored(app.clientId)).toBeNull();
    expect(await set(k, app.clientId, "https://rp.example.com/logout")).toMatchObject({ ok: true });
    expect(await stored(app.clientId)).toBe("https://rp.example.com/logout");
  });

  it("with loopback allowed (development), takes https on localhost, still not http, nor other internal hosts", async () => {
    const k = on({ BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: LOOPBACK_NETWORKS });
    const app = await registerApp();
    expect(await set(k, app.clientId, "http://localhost:8080/logout")).toMatchObject(refused(/must use https/));
    for (const uri of ["https://169.254.169.254/latest/meta-data/", "https://10.0.0.1:8443/logout", "https://[fd00::1]/logout"])
      expect(await set(k, app.clientId, uri), uri).toMatchObject(refused(/must be on a public host/));
    for (const uri of ["https://127.0.0.1:8443/logout", "https://[::1]:8443/logout", "https://localhost:8443/logout"]) {
      expect(await set(k, app.clientId, uri), uri).toMatchObject({ ok: true });
      expect(await stored(app.clientId)).toBe(uri);
    }
  });
});

describe("delivering to a relying party on loopback", () => {
  let strict: Keyfob; // no network allowed besides public ones: the default
  let development: Keyfob; // loopback allowed
  let rp: TestRp;

  beforeAll(async () => {
    // A database of its own: another file's delivery loop must not take these tokens.
    const url = await emptyDatabase("backchannel_network_test");
    await migrateDatabase(url);
    const instance = (env: Record<string, string>) =>
      createKeyfob({ ...loadConfig({ ...process.env, ...env }), databaseUrl: url, recoveryThreads: 0 });
    strict = instance({});
    development = instance({ BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: LOOPBACK_NETWORKS });
    await strict.keys.signingKey();
    rp = new TestRp(await freePort(), () => strict);
    await rp.start();
  }, 60_000);

  afterAll(async () => {
    await rp?.stop();
    await strict?.close();
    await development?.close();
  });

  it("sends nothing without loopback allowed, and audits the give-up without the address; with it, delivers", async () => {
    const app = await registerApp({ on: strict });
    // Registered while loopback was allowed; the setting has since been removed (or the URI predates the rule).
    await updateClient(strict.store, app.clientId, { backchannelLogoutUri: rp.uri(app.clientId) }, development.config);
    const ended = await sessionWith([app], google(), strict);
    expect(await endSession(strict, ended.token)).toBe(true);
    await strict.logouts.deliverDue();
    expect(rp.requests).toBe(0);
    expect(await strict.store.logouts.pending()).toBe(0); // given up at once, not retried
    await strict.audit.flush();
    const audit = await tables(strict).auditEvent.findMany({ where: { action: "logout.backchannel", clientId: app.clientId } });
    // Neither the address nor the port, nor whether anything listens there: no port-scan oracle.
    expect(audit).toMatchObject([
      { outcome: "delivery_failed", detail: "given up after 1 attempts: the URI's host is not on a network Keyfob may reach" },
    ]);

    // The same client and relying party, delivered by an instance that allows loopback.
    const next = await sessionWith([app], google(), strict);
    expect(await endSession(strict, next.token)).toBe(true);
    await development.logouts.deliverDue();
    expect(rp.to(app.clientId)).toMatchObject([{ aud: app.clientId, sid: next.idTokens.get(app.clientId)!.sid }]);
  });
});
