/**
 * Debian's PostgreSQL 15, for the tests that need what the embedded PostgreSQL 18 lacks (pg_dump,
 * pg_restore, pg_basebackup) and that check Keyfob's SQL on the oldest PostgreSQL it supports.
 * Found or installed like PgBouncer (scripts/pgbouncer.ts): POSTGRESQL_15_BIN when set (a folder
 * with the server and its client tools), else Debian's folder, else the distribution's package
 * (apt-get install postgresql-15 as root here). Says on one line what it did.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { findOrInstall, isExecutable } from "./system-packages";

/** Where Debian's postgresql-15 package puts its binaries. */
const DEBIAN_BIN = "/usr/lib/postgresql/15/bin";
const NEEDED = ["initdb", "pg_ctl", "postgres", "pg_dump", "pg_restore", "pg_basebackup"];

/** The bin folder of a PostgreSQL 15 with its server and backup tools, or undefined (and why, on stdout). */
export function findPostgresql15(): string | undefined {
  return findOrInstall({
    name: "postgresql 15",
    variable: "POSTGRESQL_15_BIN",
    pkg: "postgresql-15",
    installed: () => (working(DEBIAN_BIN) ? DEBIAN_BIN : undefined),
    usable: working,
    needs: `a folder with a working PostgreSQL 15 ${NEEDED.join(", ")}`,
  });
}

/** Every binary is there, and `postgres --version` says 15. */
function working(dir: string): boolean {
  if (!NEEDED.every((name) => isExecutable(path.join(dir, name)))) return false;
  const version = spawnSync(path.join(dir, "postgres"), ["--version"], { encoding: "utf8", timeout: 10_000 });
  return version.status === 0 && / 15\.\d+/.test(version.stdout);
}
