/**
 * The first admin (lib/admin/first-admin.ts) on a database of its own (it needs "no admin at all"),
 * with two Keyfob instances on it: the set-up link printed at start while there is no admin, its
 * code stored hashed, accepted by any instance, once, for an hour, and refused once an admin
 * exists; and `keyfob admins grant/list/revoke`, which take effect on a running instance at once.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { isAdmin } from "@/lib/admin/access";
import { checkSetupCode, claimFirstAdmin, printFirstAdminLink, SetupRefused } from "@/lib/admin/first-admin";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { createStore } from "@/lib/store";
import { cliOn } from "./support/cli";
import { emptyDatabase, tables } from "./support/database";

let url: string;
let a: Keyfob;
let b: Keyfob;
let time = new Date("2026-12-02T10:00:00Z");
const clock = { now: () => time };
const wallet = () => privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  url = await emptyDatabase("first_admin");
  await migrateDatabase(url);
  const config = { ...loadConfig({ ...process.env, ADMIN_ADDRESSES: "", ADMIN_EMAILS: "" }), databaseUrl: url };
  a = createKeyfob(config, createStore(url, 2), { clock });
  b = createKeyfob(config, createStore(url, 2), { clock });
});
afterAll(async () => {
  for (const k of [a, b]) {
    await k.close();
    await k.store.close();
  }
});
beforeEach(async () => {
  await tables(a).adminRole.deleteMany();
  time = new Date(time.getTime() + 86_400_000);
});

/** The code of the link an instance prints at start (undefined when it prints none). */
async function startUp(k: Keyfob): Promise<{ code?: string; printed: string }> {
  const lines: string[] = [];
  await printFirstAdminLink(k, (line) => lines.push(line));
  const printed = lines.join("\n");
  const link = /(\S+\/admin\/setup\?code=\S+)/.exec(printed)?.[1];
  if (link) expect(link.startsWith(`${k.config.issuerUrl}/admin/setup?code=`)).toBe(true);
  return { code: link ? new URL(link).searchParams.get("code")! : undefined, printed };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error) => (error instanceof SetupRefused ? error.reason : Promise.reject(error)),
  );

it("prints a one-time link while there is no admin; its code works once, on any instance, stored hashed", async () => {
  const { code, printed } = await startUp(a);
  expect(printed).toMatch(/No admin yet/);
  expect(await tables(a).adminSetupCode.findUnique({ where: { codeHash: opaqueDigest(code!) } })).toMatchObject({ usedAt: null });
  expect(JSON.stringify(await tables(a).adminSetupCode.findMany())).not.toContain(code);
  expect(await checkSetupCode(b, code)).toBe("ok");

  const first = wallet();
  await claimFirstAdmin(b, code, first);
  expect(await isAdmin(a, first)).toBe(true);
  expect(await refusal(claimFirstAdmin(a, code, wallet()))).toBe("admin-exists");
  expect(await checkSetupCode(a, code)).toBe("admin-exists");
  expect((await startUp(a)).code).toBeUndefined(); // an admin exists: no link at the next start

  // Without any admin again, the used code stays used.
  await tables(a).adminRole.deleteMany();
  expect(await refusal(claimFirstAdmin(a, code, wallet()))).toBe("used");
  expect(await refusal(claimFirstAdmin(a, "not-a-code", wallet()))).toBe("unknown");
  expect(await refusal(claimFirstAdmin(a, opaqueDigest("another"), wallet()))).toBe("unknown");

  const events = await tables(a).auditEvent.findMany({ where: { actor: "setup link" }, orderBy: { id: "asc" } });
  expect(events.map((e) => [e.action, e.outcome, e.accountId === first])).toEqual([
    ["admin.granted", "success", true],
    ["admin.granted", "rejected", false],
    ["admin.granted", "rejected", false],
    ["admin.granted", "rejected", false],
    ["admin.granted", "rejected", false],
  ]);
});

it("refuses a code after an hour", async () => {
  const { code } = await startUp(b);
  time = new Date(time.getTime() + 3600_000);
  expect(await checkSetupCode(a, code)).toBe("expired");
  expect(await refusal(claimFirstAdmin(a, code, wallet()))).toBe("expired");
  expect(await tables(a).adminRole.count()).toBe(0);
});

it("makes one first admin of two claims at once, on two instances with two codes", async () => {
  const [one, two] = [(await startUp(a)).code, (await startUp(b)).code];
  const outcomes = await Promise.all([refusal(claimFirstAdmin(a, one, wallet())), refusal(claimFirstAdmin(b, two, wallet()))]);
  expect(outcomes.sort()).toEqual(["admin-exists", "ok"]);
  expect(await tables(a).adminRole.count()).toBe(1);
});

it("grants, lists and revokes admins from the command line, at once on a running instance", { timeout: 120_000 }, async () => {
  const configured = wallet().toLowerCase();
  const cli = cliOn(url, { ADMIN_ADDRESSES: configured, ADMIN_EMAILS: "" });
  const granted = wallet();
  expect(await cli("admins", "grant", granted.toLowerCase())).toMatchObject({ code: 0, stderr: "" });
  expect(await isAdmin(a, granted)).toBe(true);
  const listed = await cli("admins", "list");
  expect(listed).toMatchObject({ code: 0, stderr: "" });
  expect(listed.stdout).toContain(`${configured}  configured (ADMIN_ADDRESSES)`);
  expect(listed.stdout).toMatch(new RegExp(`${granted}  granted by cli:\\S+ on `));
  expect(await cli("admins", "revoke", granted)).toMatchObject({ code: 0, stdout: `${granted} is no longer an admin\n` });
  expect(await isAdmin(b, granted)).toBe(false);
  expect(await cli("admins", "revoke", granted)).toMatchObject({ code: 2, stderr: "error: accountId: this account has no admin role\n" });
  expect(await cli("admins", "revoke", configured)).toMatchObject({
    code: 3,
    stderr: "error: accountId: this admin is configured in ADMIN_ADDRESSES: remove it there and restart\n",
  });
  const events = await tables(a).auditEvent.findMany({ where: { accountId: granted }, orderBy: { id: "asc" } });
  expect(events.map((e) => [e.action, e.outcome, e.actor?.startsWith("cli:")])).toEqual([
    ["admin.granted", "success", true],
    ["admin.revoked", "success", true],
    ["admin.revoked", "rejected", true],
  ]);
});
