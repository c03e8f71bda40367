/**
 * The PgBouncer that the pooled-database tests put in front of PostgreSQL (a transaction pooler, as
 * production runs one), found or installed like the browser (scripts/browser.ts): PGBOUNCER_PATH
 * when set, else `pgbouncer` on the system, else the distribution's package (apt-get install
 * pgbouncer as root here). Says on one line what it did.
 */
import { spawnSync } from "node:child_process";
import { findOrInstall, isExecutable, onPath } from "./system-packages";

export function findPgbouncer(): string | undefined {
  return findOrInstall({
    name: "pgbouncer",
    variable: "PGBOUNCER_PATH",
    pkg: "pgbouncer",
    installed: () => working(onPath("pgbouncer")),
    usable: isExecutable,
    needs: "an executable file",
  });
}

/** `--version` weeds out a binary that cannot run here. */
function working(file: string | undefined): string | undefined {
  return file && spawnSync(file, ["--version"], { stdio: "ignore", timeout: 10_000 }).status === 0 ? file : undefined;
}
