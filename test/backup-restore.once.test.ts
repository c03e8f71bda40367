/**
 * Backup and restore, following the runbook in docs/deployment.md ("Backup and restore") on
 * Debian's PostgreSQL 15 (found or installed: scripts/postgresql.ts), the oldest PostgreSQL Keyfob
 * supports: Keyfob migrates a cluster of its own and issues tokens there (Flow A, a code exchange
 * with a refresh token, one token revoked, the code used); then, while that instance runs, a
 * `pg_dump -Fc` restored with `pg_restore` into a new cluster, and a `pg_basebackup -X stream`
 * started as a new cluster. On each copy an instance with the same KEYFOB_SECRET carries on where
 * the original was (tokens active or revoked as before, the code used, the refresh token good once,
 * new tokens signed by the restored key; a token issued after the copy is unknown to it); one with another KEYFOB_SECRET still verifies tokens
 * (public keys are not encrypted) but signs none: /token answers 503 (another instance can), and the log and the
 * error say that the signing keys cannot be decrypted with this KEYFOB_SECRET.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { readiness } from "@/lib/health";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { log } from "@/lib/log";
import { findPostgresql15 } from "../scripts/postgresql";
import { expectError } from "./support/flow-a";
import { authorize, tokenRequest } from "./support/flow-b";
import { accepted, accessToken, carryOn, check, issueOnEveryFlow, majorVersion, refused, type Issued } from "./support/flows-on-database";
import { startPostgresCluster, type ClusterOptions, type PostgresCluster } from "./support/postgres-cluster";
import { routesOn } from "./support/routes";

const run = promisify(execFile);
const SECRET = randomBytes(32).toString("base64url");
const clusters: PostgresCluster[] = [];
const instances: Keyfob[] = [];
let bin: string;
let source: PostgresCluster;
/** The instance on `source`, serving on while the copies are made. */
let original: Keyfob;
let dumps: string;
/** What the original instance issued, to look for on each restored copy. */
let issued: Issued;

/** A Keyfob instance on `url`, as a server started with these settings would be. */
function keyfobOn(url: string, secret: string): Keyfob {
  const k = createKeyfob(
    loadConfig({ ...process.env, DATABASE_URL: url, DATABASE_DIRECT_URL: url, KEYFOB_SECRET: secret, RECOVERY_THREADS: "0" }),
  );
  instances.push(k);
  return k;
}

/** A new cluster, on PostgreSQL 15 unless `options` give other binaries (`bin: undefined`: the embedded PostgreSQL 18). */
async function cluster(options: ClusterOptions = {}) {
  const started = await startPostgresCluster({ bin, ...options });
  clusters.push(started);
  return started;
}

beforeAll(async () => {
  const found = findPostgresql15();
  if (!found)
    throw new Error("PostgreSQL 15 (pg_dump, pg_restore, pg_basebackup) is needed for this test and could not be found or installed");
  bin = found;
  dumps = await mkdtemp(path.join(os.tmpdir(), "keyfob-dump-"));
  source = await cluster();
  await migrateDatabase(source.url());
  original = keyfobOn(source.url(), SECRET);
  issued = await issueOnEveryFlow(original);
}, 90_000);

afterAll(async () => {
  vi.restoreAllMocks();
  for (const k of instances) await k.close();
  for (const c of clusters) await c.destroy();
  if (dumps) await rm(dumps, { recursive: true, force: true });
});

it("runs Keyfob's migrations and flows on PostgreSQL 15", async () => {
  expect(await majorVersion(source.url())).toBe(15);
  expect(issued.kid).toMatch(/^[0-9a-f]{40}$/); // beforeAll issued, revoked and exchanged there
});

/** Each way of copying a running Keyfob's database: the PostgreSQL major version of the copy, and its URL. */
const copies: [string, number, () => Promise<string>][] = [
  ["pg_dump -Fc, restored with pg_restore into a new cluster", 15, () => dumpAndRestore(bin)],
  // The move to a newer major version: PostgreSQL 15's dump into the embedded PostgreSQL 18.
  ["pg_dump -Fc, restored with pg_restore into a new PostgreSQL 18 cluster", 18, () => dumpAndRestore(undefined)],
  ["a base backup (pg_basebackup -X stream) started as a new cluster", 15, async () => (await cluster({ baseBackupOf: source })).url()],
];

/** A dump of the source, restored into a new cluster (an empty database `keyfob`) on `targetBin` (default: the embedded PostgreSQL). */
async function dumpAndRestore(targetBin: string | undefined): Promise<string> {
  const dump = path.join(dumps, `keyfob-${clusters.length}.dump`);
  await run(path.join(bin, "pg_dump"), ["--format=custom", `--file=${dump}`, source.url()]);
  const target = await cluster({ bin: targetBin });
  await run(path.join(bin, "pg_restore"), ["--exit-on-error", "--no-owner", "--no-privileges", `--dbname=${target.url()}`, dump]);
  return target.url();
}

describe.each(copies)("%s", (_name, major, copy) => {
  let url: string;
  let restored: Keyfob;
  /** Issued by the original instance after the copy was made. */
  let late: string;

  beforeAll(async () => {
    url = await copy();
    late = await accessToken(original, issued.license);
    await migrateDatabase(url); // as every instance does at start: nothing left to apply
    restored = keyfobOn(url, SECRET);
    expect(await majorVersion(url)).toBe(major);
  }, 60_000);

  it("with the same KEYFOB_SECRET: tokens, revocations, used codes and refresh tokens are as they were, and the restored key signs", async () => {
    expect(await readiness(restored, false)).toMatchObject({ ready: true, checks: { signing_keys: "ok" } });
    // Signed by the same key, but not on record in the copy.
    expect(await check(restored, late, issued.introspector)).toEqual(refused);
    expect(await check(original, late, issued.introspector)).toEqual(accepted);
    await carryOn(restored, issued);
  });

  it("with another KEYFOB_SECRET: tokens still verify, but nothing is signed, and the error says why", async () => {
    const other = keyfobOn(url, randomBytes(32).toString("base64url"));
    const errors = vi.spyOn(log, "error").mockImplementation(() => undefined);
    try {
      // The public keys are not encrypted: what was issued still verifies.
      expect(await check(other, issued.flowA, issued.introspector)).toEqual(accepted);

      await expect(other.keys.signingKey()).rejects.toThrow(/^signing key [0-9a-f]{40} cannot be decrypted with this KEYFOB_SECRET/);
      const code = (await authorize(issued.app, undefined, {}, other)).searchParams.get("code")!;
      const answer = await routesOn(other).token(tokenRequest(issued.app, { code }));
      const body = await expectError(answer, 503, "temporarily_unavailable");
      expect(body.error_description).toBe("a dependency is unavailable; try again shortly"); // no stack, no key, no secret
      expect(errors).toHaveBeenCalledWith("signing keys cannot be decrypted with this KEYFOB_SECRET", { kid: issued.kid });
      expect(errors).toHaveBeenCalledWith(
        "request failed",
        expect.objectContaining({ endpoint: "token", cause: expect.stringMatching(/cannot be decrypted with this KEYFOB_SECRET/) }),
      );
      // Balancers stop sending to it.
      expect((await readiness(other, false)).checks.signing_keys).toBe("failed");
    } finally {
      errors.mockRestore();
    }
  });
});
