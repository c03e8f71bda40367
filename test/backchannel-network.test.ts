/**
 * Back-channel logout must not be a way to make Keyfob send requests into its own machine or
 * network (security review round 3, item 6). Registration, through the admin action that the
 * dashboard, the command line and the management API share, refuses URIs on loopback, private,
 * link-local, shared, unique-local and metadata hosts, and plain http under an https issuer.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Admin } from "@/lib/admin/access";
import { runAdminAction } from "@/lib/admin/actions";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { INTERNAL_URIS, LOOPBACK_NETWORKS } from "./support/backchannel";
import { tables } from "./support/database";
import { registerApp } from "./support/flow-b";

const admin: Admin = { accountId: "0x0000000000000000000000000000000000000001", label: "backchannel-network-test" };

describe("registering a back-channel logout URI under an https issuer", () => {
  const instances: Keyfob[] = [];
  const on = (env: Record<string, string>) => {
    const k = createKeyfob(loadConfig({ ...process.env, ISSUER_URL: "https://id.example.com", ...env }), keyfob().store);
    instances.push(k);
    return k;
  };
  afterAll(() => Promise.all(instances.map((k) => k.close())));

  const set = (k: Keyfob, clientId: string, backchannelLogoutUri: string) =>
    runAdminAction(k, admin, "client.update", { clientId, backchannelLogoutUri });
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
