/**
 * The admin CLI as a command line tool (separate processes): `npx keyfob` through the package's
 * bin, `--help` for each command, `--json` for every read with nothing else on stdout, exit codes
 * that say what failed (docs/cli.md), the built-in dashboard client refused as read-only, and
 * what an unreachable database or server is told (the CLI's, and `npm run token`'s via KEYFOB_URL).
 */
import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { ADMIN_CLIENT_ID } from "@/lib/clients/client-id";
import { keyfob } from "@/lib/runtime";
import { freePort } from "@/scripts/free-port";
import { cli, cliOn } from "./support/cli";
import { tables } from "./support/database";

/** A command as the operator types it, its output captured. */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

it("runs as `npx keyfob` without npm's banner, and explains each command with --help", { timeout: 60_000 }, async () => {
  const help = await run("npx", ["--no-install", "keyfob", "clients", "secret", "--help"]);
  expect(help).toMatchObject({ code: 0, stderr: "" });
  expect(help.stdout).toMatch(/^Usage: keyfob clients secret <client_id> \[--overlap <seconds>\]\n\nmake confidential/);
  const all = await cli("--help");
  expect(all.code).toBe(0);
  expect(all.stdout).toContain("  admins grant <address>\n");
  expect(all.stdout).toMatch(/Exit codes: 0 done, 1 usage or invalid input, 2 not found/);
  expect((await cli("keys", "list", "--help")).stdout).toContain("--json  print the result as JSON");
});

it("says what failed in its exit code: usage 1, not found 2, conflict 3", { timeout: 120_000 }, async () => {
  const usage = await Promise.all([
    cli("clients", "frobnicate"),
    cli("clients", "list", "--colour"),
    cli("clients", "enable", "kf_x", "--json"),
    cli("redirect-uris", "add", "kf_x"),
  ]);
  expect(usage.map((r) => [r.code, r.stdout])).toEqual(Array(4).fill([1, ""]));
  expect(usage[0].stderr).toBe("error: unknown command: clients frobnicate; see keyfob --help\n");
  expect(usage[2].stderr).toBe("error: --json is for reads (list, show); clients enable is a change\n");
  expect(usage[3].stderr).toBe("error: uri: <uri> is required\n");

  const id = /client (\S+) created/.exec((await cli("clients", "add", "--name", "Exit codes")).stdout)![1];
  const [missing, taken, invalid] = await Promise.all([
    cli("clients", "disable", "kf_no_such_client"),
    cli("clients", "add", "--id", id, "--name", "Again"),
    cli("redirect-uris", "add", id, "ftp://example.com/cb"),
  ]);
  expect(missing).toMatchObject({ code: 2, stderr: "error: clientId: no client with id kf_no_such_client\n" });
  expect(taken).toMatchObject({ code: 3, stderr: `error: id: a client with id ${id} already exists\n` });
  expect(invalid.code).toBe(1);
});

it("refuses changes to the built-in dashboard client, audited, and does not change it", { timeout: 60_000 }, async () => {
  const k = keyfob();
  await k.store.clients.ensure(ADMIN_CLIENT_ID, "Keyfob admin", `${k.config.issuerUrl}/admin/callback`);
  const refused = await Promise.all([
    cli("clients", "disable", ADMIN_CLIENT_ID),
    cli("redirect-uris", "add", ADMIN_CLIENT_ID, "https://evil.example/cb"),
    cli("clients", "secret", ADMIN_CLIENT_ID),
  ]);
  for (const result of refused)
    expect(result).toMatchObject({
      code: 3,
      stderr: "error: clientId: keyfob-admin is built in (the dashboard's own sign-in) and cannot be changed\n",
    });
  const client = await tables(k).client.findUniqueOrThrow({ where: { id: ADMIN_CLIENT_ID }, include: { redirectUris: true } });
  expect([client.enabled, client.secretHash, client.redirectUris.map((r) => r.uri)]).toEqual([
    true,
    null,
    [`${k.config.issuerUrl}/admin/callback`],
  ]);
  const audited = await tables(k).auditEvent.findFirstOrThrow({ where: { clientId: ADMIN_CLIENT_ID, action: "client.disabled" } });
  expect(audited.outcome).toBe("rejected");
});

it("prints every read as JSON with --json, and nothing else on stdout", { timeout: 120_000 }, async () => {
  const id = /client (\S+) created/.exec((await cli("clients", "add", "--name", "JSON reads")).stdout)![1];
  expect((await cli("clients", "secret", id)).code).toBe(0);
  const [clients, keys, admins] = await Promise.all([
    run(process.execPath, ["bin/keyfob.js", "clients", "list", "--json"], { KEYFOB_LOG: "" }),
    cli("keys", "list", "--json"),
    cli("admins", "list", "--json"),
  ]);
  const client = JSON.parse(clients.stdout).find((c: { id: string }) => c.id === id);
  expect(client).toMatchObject({ id, name: "JSON reads", enabled: true, confidential: true, redirectUris: [] });
  expect(clients.stdout).not.toMatch(/secretHash/);
  expect(JSON.parse(keys.stdout)[0]).toMatchObject({ kid: expect.any(String), purpose: expect.any(String), status: expect.any(String) });
  expect(Array.isArray(JSON.parse(admins.stdout))).toBe(true);
});

it("tells the operator what to do when the database or the server cannot be reached (exit 4)", { timeout: 60_000 }, async () => {
  const port = await freePort();
  const [database, server] = await Promise.all([
    cliOn(`postgresql://keyfob:keyfob@127.0.0.1:${port}/keyfob`)("clients", "list"),
    run(
      process.execPath,
      [
        "--import",
        "tsx",
        "scripts/token.ts",
        "--client-id",
        "0x0000000000000000000000000000000000000001",
        "--domain",
        "https://a.example/cb",
      ],
      { KEYFOB_URL: `http://127.0.0.1:${port}`, KEYFOB_PRIVATE_KEY: `0x${"1".repeat(64)}` },
    ),
  ]);
  expect(database.code).toBe(4);
  expect(database.stderr).toContain(`cannot use the database in DATABASE_URL (postgresql://127.0.0.1:${port}/keyfob)`);
  expect(database.stderr).toContain("Is PostgreSQL running there and DATABASE_URL right");
  expect(server.code).toBe(4);
  expect(server.stderr).toContain(`Is Keyfob running at http://127.0.0.1:${port}? Start it with \`npm start\``);
});
