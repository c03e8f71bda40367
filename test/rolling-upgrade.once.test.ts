/**
 * Rolling upgrade (issue 32): the previous release and this one serve one database together. The
 * previous release is the upgrade baseline, a commit recorded in prisma/upgrade-baseline. Its tree
 * is taken from this repository's own history (`git archive`, so a fresh clone works; a shallow
 * clone without the commit FAILS with a message saying so: skipping would let a contract step
 * through unnoticed), given this checkout's node_modules (its dependencies are a subset), and its
 * own Prisma client is generated. The database is migrated by THIS release; then the baseline's
 * own `npm run db:migrate` runs on it (an old instance restarted mid-upgrade must find nothing to
 * do), and both serve it, each its own process on its own port, with one KEYFOB_SECRET and one
 * ISSUER_URL (two instances of one deployment behind a balancer). Flow A, Flow B's code exchange,
 * refresh, revocation, introspection and /userinfo are driven across them over HTTP in both
 * directions, and every token must verify against both instances' /keys (a resource server reaches
 * either through the balancer). Keys made by either release serve both: the baseline makes the
 * access token key; a vehicle token key this release made is never published or used by the
 * baseline; the key an emergency revocation through this release makes signs at both.
 *
 * The rule for migrations (expand, then contract a release later): while the baseline runs on the
 * schema, a migration it does not have may only ADD what the baseline ignores (tables, nullable
 * columns or columns with a default, indexes, functions). It may not take away or change what the
 * baseline reads or writes: no DROP (table, column, index, constraint, function, trigger), no
 * RENAME, no column type change, no SET NOT NULL, no NOT NULL column without a default on an
 * existing table (the baseline's INSERTs do not name it). Such a contract step waits until the
 * baseline has moved past the release that needed the old shape. The static check below refuses
 * them by statement; whether a new index or constraint changes what the baseline's queries do is
 * beyond a static check, and is what running both releases side by side is for.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "@/lib/config";
import { localMigrations, migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { emptyDatabase } from "./support/database";
import { challengeParams, ISSUER, registerLicense, submitParams } from "./support/flow-a";
import { type App, authorize, basic, FORM, google, registerApp } from "./support/flow-b";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
const BASELINE_FILE = "prisma/upgrade-baseline";
const MIGRATIONS = "prisma/migrations";

/** The baseline's full commit hash: the one line of prisma/upgrade-baseline that is not a comment. */
async function baselineCommit(): Promise<string> {
  const lines = (await readFile(path.join(ROOT, BASELINE_FILE), "utf8")).split("\n").map((line) => line.trim());
  const commits = lines.filter((line) => line && !line.startsWith("#"));
  if (commits.length !== 1 || !/^[0-9a-f]{40}$/.test(commits[0])) {
    throw new Error(`${BASELINE_FILE} must hold one full commit hash (40 hex digits), got ${JSON.stringify(commits)}`);
  }
  return commits[0];
}

/** The baseline's commit, checked to be in this clone's history. */
async function presentBaseline(): Promise<string> {
  const commit = await baselineCommit();
  try {
    await run("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: ROOT });
  } catch {
    throw new Error(
      `The upgrade baseline ${commit} (${BASELINE_FILE}) is not in this clone's history, so the rolling-upgrade ` +
        "check cannot run. A shallow clone? Run `git fetch --unshallow` (in CI: a checkout with full history, e.g. fetch-depth: 0).",
    );
  }
  return commit;
}

/** A migration's statements that take away or change what the baseline uses (see the rule above). */
function contractSteps(sql: string): string[] {
  const statements = sql
    .replace(/--[^\n]*/g, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split(";")
    .map((statement) => statement.replace(/\s+/g, " ").trim())
    .filter(Boolean);
  return statements.filter(
    (statement) =>
      /\bDROP\b/i.test(statement) ||
      /\bRENAME\b/i.test(statement) ||
      /\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i.test(statement) ||
      /\bSET\s+NOT\s+NULL\b/i.test(statement) ||
      (/^ALTER\s+TABLE\b/i.test(statement) &&
        /\bADD\s+(COLUMN\s+)?\S+\s[^,]*\bNOT\s+NULL\b/i.test(statement) &&
        !/\bDEFAULT\b/i.test(statement)),
  );
}

describe("migrations the baseline does not have", () => {
  it("only expand the schema: no DROP, RENAME, type change or new NOT NULL the baseline's statements would trip on", async () => {
    const commit = await presentBaseline();
    const { stdout } = await run("git", ["ls-tree", "--name-only", `${commit}:${MIGRATIONS}`], { cwd: ROOT });
    const baseline = new Set(stdout.split("\n").filter(Boolean));
    const added = localMigrations().filter((name) => !baseline.has(name));
    const refused: Record<string, string[]> = {};
    for (const name of added) {
      const steps = contractSteps(await readFile(path.join(ROOT, MIGRATIONS, name, "migration.sql"), "utf8"));
      if (steps.length > 0) refused[name] = steps;
    }
    expect(refused, "contract steps must wait until prisma/upgrade-baseline has moved past the release that needs the old shape").toEqual(
      {},
    );
  });

  it("recognizes contract steps, and lets additive ones through", () => {
    const contract = [
      "DROP TABLE old_things",
      'ALTER TABLE "clients" DROP COLUMN "logo_url"',
      "DROP INDEX issued_tokens_client_idx",
      'ALTER TABLE "clients" RENAME COLUMN "name" TO "title"',
      'ALTER TABLE "clients" ALTER COLUMN "name" TYPE VARCHAR(80)',
      'ALTER TABLE "clients" ALTER COLUMN "logo_url" SET NOT NULL',
      'ALTER TABLE "clients" ADD COLUMN "tier" TEXT NOT NULL',
    ];
    expect(contractSteps(contract.map((s) => `${s};\n`).join(""))).toEqual(contract);
    const expand = `-- A comment may say DROP or RENAME.
      ALTER TABLE "clients" ADD COLUMN "token_exchange" BOOLEAN NOT NULL DEFAULT false;
      ALTER TABLE "issued_tokens" ADD COLUMN "vehicle" TEXT;
      CREATE TABLE "t" ("id" TEXT NOT NULL, CONSTRAINT "t_pkey" PRIMARY KEY ("id"));
      CREATE INDEX "t_idx" ON "t"("id");`;
    expect(contractSteps(expand)).toEqual([]);
  });
});

describe("the baseline and this release side by side on one migrated database", () => {
  const DATABASE = "rolling_upgrade";
  let tree: string;
  let databaseUrl: string;
  let k: Keyfob;
  let vehicleKid: string;
  let baseline: ProtocolProcess | undefined;
  let current: ProtocolProcess | undefined;

  beforeAll(async () => {
    const commit = await presentBaseline();
    tree = await mkdtemp(path.join(tmpdir(), "keyfob-baseline-"));
    await run("sh", ["-c", `git archive ${commit} | tar -x -C "${tree}"`], { cwd: ROOT });
    await symlink(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"));
    databaseUrl = await emptyDatabase(DATABASE);
    const env = { ...process.env, DATABASE_URL: databaseUrl, ISSUER_URL: ISSUER, KEYFOB_LOG: "warn" };
    // Its own client (lib/db/generated is not committed), while this release migrates the database.
    // JITI_FS_CACHE: Prisma's config loader would leave a cache file per tree in the shared node_modules.
    await Promise.all([
      run(process.execPath, ["node_modules/prisma/build/index.js", "generate"], { cwd: tree, env: { ...env, JITI_FS_CACHE: "false" } }),
      migrateDatabase(databaseUrl),
    ]);
    k = createKeyfob(loadConfig({ ...process.env, DATABASE_URL: databaseUrl, ISSUER_URL: ISSUER }));
    // A vehicle token key, as this release makes one for its first vehicle token: a baseline instance
    // (re)started after that must not take it for an access token key.
    vehicleKid = (await k.vehicleKeys.signingKey()).kid;
    const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/migrate.ts"], { cwd: tree, env });
    expect(stdout).toContain("the database schema is up to date");
    // The baseline starts first and makes the access token key, as the deployment being upgraded did.
    baseline = await startProtocolProcess({ DATABASE_URL: databaseUrl, ISSUER_URL: ISSUER }, { root: tree });
    current = await startProtocolProcess({ DATABASE_URL: databaseUrl, ISSUER_URL: ISSUER });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([baseline?.stop(), current?.stop(), k?.close()]);
    if (tree) await rm(tree, { recursive: true, force: true });
  });

  it("left the migrations table as this release wrote it (the baseline's migrate found nothing to do)", async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ migration_name: string }>(
        "SELECT migration_name FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(rows.map((row) => row.migration_name)).toEqual(localMigrations());
    } finally {
      await client.end();
    }
  });

  const post = (instance: ProtocolProcess, endpoint: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${instance.url}${endpoint}`, { method: "POST", headers: { ...FORM, ...headers }, body: new URLSearchParams(params) });

  /** Which release `instance` runs, for failure messages. */
  const release = (instance: ProtocolProcess) =>
    instance === baseline ? `the baseline (${instance.url})` : `this release (${instance.url})`;

  /** The 200 answer's body; another answer fails with the request, the answer and both instances' logs. */
  async function json<T = Record<string, unknown>>(response: Response, what: string): Promise<T> {
    const body = await response.text();
    if (response.status !== 200) {
      const logs = [baseline!, current!].map((instance) => `${release(instance)} logged:\n${instance.stderr().slice(-2000)}`);
      throw new Error(`${what}: ${response.status} ${body}\n${logs.join("\n")}`);
    }
    return JSON.parse(body) as T;
  }

  /** Verifies `jwt` with each instance's published keys: a resource server may fetch /keys from either. */
  async function verifiesAtBoth(jwt: string) {
    for (const instance of [baseline!, current!]) {
      const keys = await json<JSONWebKeySet>(await fetch(`${instance.url}/keys`), `GET /keys at ${release(instance)}`);
      await expect(
        jwtVerify(jwt, createLocalJWKSet(keys), { issuer: ISSUER }),
        `verified with the keys of ${release(instance)}`,
      ).resolves.toBeTruthy();
    }
  }

  const userinfo = (instance: ProtocolProcess, accessToken: string) =>
    fetch(`${instance.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  const introspect = async (instance: ProtocolProcess, app: App, token: string) =>
    json<{ active: boolean; client_id?: string }>(
      await post(instance, "/token/introspect", { token }, { authorization: basic(app) }),
      `introspection at ${release(instance)}`,
    );
  const revoke = async (instance: ProtocolProcess, app: App, token: string) =>
    json(await post(instance, "/token/revoke", { token }, { authorization: basic(app) }), `revocation at ${release(instance)}`);

  type Tokens = { access_token: string; id_token: string; refresh_token?: string };

  /** Flow A: the challenge from `one`, its signature submitted to `other`; the token then used at `one`. */
  async function flowA(one: ProtocolProcess, other: ProtocolProcess) {
    const license = await registerLicense({ on: k });
    const { state, challenge } = await json<{ state: string; challenge: string }>(
      await post(one, "/auth/web3/generate_challenge", challengeParams(license)),
      `generate_challenge at ${release(one)}`,
    );
    const signature = await license.owner.signMessage({ message: challenge });
    const tokens = await json<Tokens>(
      await post(other, "/auth/web3/submit_challenge", submitParams(license, state, signature)),
      `submit_challenge at ${release(other)}`,
    );
    await verifiesAtBoth(tokens.access_token);
    await verifiesAtBoth(tokens.id_token);
    const claims = await json(await userinfo(one, tokens.access_token), `userinfo at ${release(one)}`);
    expect(claims.sub).toBe(decodeJwt(tokens.id_token).sub);
    return tokens;
  }

  /**
   * Flow B: the login through lib/ on the shared database, the code exchanged at `other`; refreshed
   * at `one`; revoked at each and introspected and used at the other.
   */
  async function flowB(one: ProtocolProcess, other: ProtocolProcess) {
    const app = await registerApp({ confidential: true, settings: { refreshTokensAllowed: true }, on: k });
    const identity = google();
    const redirect = await authorize(app, identity, { scope: "openid email offline_access" }, k);
    const code = redirect.searchParams.get("code")!;
    const issued = await json<Tokens>(
      await post(other, "/token", { grant_type: "authorization_code", code, redirect_uri: app.redirectUri }, { authorization: basic(app) }),
      `code exchange at ${release(other)}`,
    );
    expect(issued.refresh_token).toBeTruthy();
    await verifiesAtBoth(issued.access_token);
    await verifiesAtBoth(issued.id_token);
    expect(await json(await userinfo(one, issued.access_token), `userinfo at ${release(one)}`)).toMatchObject({ email: identity.email });

    const refreshed = await json<Tokens>(
      await post(one, "/token", { grant_type: "refresh_token", refresh_token: issued.refresh_token! }, { authorization: basic(app) }),
      `refresh at ${release(one)}`,
    );
    await verifiesAtBoth(refreshed.access_token);
    expect(await json(await userinfo(other, refreshed.access_token), `userinfo at ${release(other)}`)).toMatchObject({
      email: identity.email,
    });
    expect(await introspect(other, app, refreshed.access_token)).toMatchObject({ active: true, client_id: app.clientId });
    expect(await introspect(other, app, refreshed.refresh_token!)).toMatchObject({ active: true, client_id: app.clientId });

    // The first access token revoked at `other`: `one` says so, and refuses it.
    await revoke(other, app, issued.access_token);
    expect(await introspect(one, app, issued.access_token)).toEqual({ active: false });
    expect((await userinfo(one, issued.access_token)).status).toBe(401);

    // The refresh token revoked at `one`: its family and the access token issued with it end at `other`.
    await revoke(one, app, refreshed.refresh_token!);
    expect(await introspect(other, app, refreshed.refresh_token!)).toEqual({ active: false });
    expect(await introspect(other, app, refreshed.access_token)).toEqual({ active: false });
    expect((await userinfo(other, refreshed.access_token)).status).toBe(401);
    const refused = await post(
      other,
      "/token",
      { grant_type: "refresh_token", refresh_token: refreshed.refresh_token! },
      { authorization: basic(app) },
    );
    expect(refused.status).toBe(400);
  }

  const publishedKids = async (instance: ProtocolProcess) =>
    (await json<JSONWebKeySet>(await fetch(`${instance.url}/keys`), `GET /keys at ${release(instance)}`)).keys.map((key) => key.kid).sort();

  it("publishes the same keys from both, and never this release's vehicle token keys (a table the baseline does not read)", async () => {
    const kids = await publishedKids(baseline!);
    expect(kids.length).toBeGreaterThan(0);
    expect(await publishedKids(current!)).toEqual(kids);
    expect(kids).not.toContain(vehicleKid);
  });

  it("Flow A: a challenge from the baseline, submitted to this release, and the reverse", async () => {
    await flowA(baseline!, current!);
    await flowA(current!, baseline!);
  });

  it("Flow B: a code exchanged at this release, refreshed, revoked and introspected at the baseline", async () => {
    await flowB(baseline!, current!);
  });

  it("Flow B: a code exchanged at the baseline, refreshed, revoked and introspected at this release", async () => {
    await flowB(current!, baseline!);
  });

  it("an emergency key revocation through this release: the key it makes signs at both, and verifies at both", async () => {
    const before = (await k.keys.signingKey()).kid;
    const revocation = await k.keys.revoke(before, "rolling-upgrade test");
    if (revocation.outcome !== "revoked" || !revocation.successor)
      throw new Error(`expected a successor, got ${JSON.stringify(revocation)}`);
    // Both instances hear of it (NOTIFY) and reload their keys.
    for (const instance of [baseline!, current!]) {
      await vi.waitFor(async () => expect(await publishedKids(instance)).not.toContain(before), { timeout: 10_000, interval: 100 });
    }
    const signedWith = (jwt: string) => decodeProtectedHeader(jwt).kid;
    const tokens = [await flowA(baseline!, current!), await flowA(current!, baseline!)];
    expect(tokens.map((t) => signedWith(t.access_token))).toEqual([revocation.successor, revocation.successor]);
  });
});
