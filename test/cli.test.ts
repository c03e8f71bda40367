/**
 * The admin CLI as an operator runs it (a separate process on the shared database): every command
 * exits as soon as its work is done, with code 0, and overlapping calls all succeed.
 */
import { expect, it } from "vitest";
import { createClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { cli } from "./support/cli";
import { tables } from "./support/database";

it("exits with code 0 once a command is done, and runs overlapping calls side by side", { timeout: 60_000 }, async () => {
  const results = await Promise.all([
    cli("clients", "add", "--name", "CLI one"),
    cli("clients", "add", "--name", "CLI two"),
    cli("clients", "add", "--name", "CLI three"),
  ]);
  for (const result of results) {
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^client kf_\S+ created$/m);
  }
  const ids = results.map((r) => /client (\S+) created/.exec(r.stdout)![1]);
  const found = await tables(keyfob()).client.findMany({ where: { id: { in: ids } } });
  expect(found.map((c) => c.name).sort()).toEqual(["CLI one", "CLI three", "CLI two"]);
});

it("exits with code 2 (not found) and one line on stderr for an unknown client", { timeout: 60_000 }, async () => {
  const result = await cli("redirect-uris", "add", "kf_missing", "https://app.example.com/cb");
  expect(result.code).toBe(2);
  expect(result.stderr.trim()).toBe("error: clientId: no client with id kf_missing");
});

// Nine CLI processes one after another, each loading tsx and lib/: up to 10 s apiece on a busy machine.
it("changes a client's settings, post-logout URIs and allowed origins, and refuses control characters", { timeout: 120_000 }, async () => {
  const created = await cli("clients", "add", "--name", "SPA");
  const id = /client (\S+) created/.exec(created.stdout)![1];
  expect((await cli("clients", "secret", id)).code).toBe(0);
  const settings = "--require-pkce yes --resource-server yes --require-par yes --device-flow yes --device-offline-access yes";
  expect(await cli("clients", "set", id, ...settings.split(" "))).toMatchObject({ code: 0 });
  expect((await cli("clients", "set", id, "--refresh-tokens", "maybe")).stderr).toBe(
    "error: refresh-tokens: --refresh-tokens takes yes or no\n",
  );
  expect(await cli("post-logout-uris", "add", id, "https://spa.example.com/bye")).toMatchObject({ code: 0 });
  expect(await cli("origins", "add", id, "https://spa.example.com")).toMatchObject({ code: 0 });
  expect((await cli("origins", "add", id, "https://spa.example.com/path")).stderr).toMatch(/must be an origin only/);
  const client = await tables(keyfob()).client.findUniqueOrThrow({ where: { id }, include: { allowedOrigins: true } });
  expect([
    client.requirePkce,
    client.resourceServer,
    client.refreshTokensAllowed,
    client.deviceFlow,
    client.deviceFlowOfflineAccess,
  ]).toEqual([true, true, false, true, true]);
  expect(client.requirePushedAuthorizationRequests).toBe(true);
  expect(await tables(keyfob()).postLogoutRedirectUri.count({ where: { clientId: id } })).toBe(1);
  expect(client.allowedOrigins.map((o) => o.origin)).toEqual(["https://spa.example.com"]);
  // argv cannot carry NUL itself (the OS refuses it); any other control character is refused by the CLI.
  expect(await cli("clients", "add", "--name", "bad\u0007name")).toMatchObject({
    code: 1,
    stderr: "error: arguments: must not contain control characters\n",
  });
});

it("allows a client vehicle token exchange, audited, and lists it", { timeout: 120_000 }, async () => {
  const { id } = await createClient(keyfob().store, { name: "Fleet app" });
  expect(await cli("clients", "set", id, "--token-exchange", "yes")).toMatchObject({ code: 0, stderr: "" });
  expect((await tables(keyfob()).client.findUniqueOrThrow({ where: { id } })).tokenExchange).toBe(true);
  expect((await cli("clients", "set", id, "--token-exchange", "maybe")).stderr).toBe(
    "error: token-exchange: --token-exchange takes yes or no\n",
  );
  const listed = (await cli("clients", "list")).stdout;
  const block = listed.slice(listed.indexOf(`${id}  enabled`)).split(/\n(?! )/)[0];
  expect(block).toContain("    vehicle token exchange allowed (RFC 8693)");
  const event = await tables(keyfob()).auditEvent.findFirstOrThrow({ where: { clientId: id, action: "client.updated" } });
  expect(event).toMatchObject({ outcome: "success", actor: expect.stringMatching(/^cli:/), detail: "tokenExchange: false -> true" });
});
