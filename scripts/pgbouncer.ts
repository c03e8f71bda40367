/**
 * The PgBouncer that the pooled-database tests put in front of PostgreSQL (a transaction pooler, as
 * production runs one), found or installed like the browser (scripts/browser.ts): PGBOUNCER_PATH
 * when set, else `pgbouncer` on the system, else the distribution's package (apt-get install
 * pgbouncer as root here). Says on one line what it did.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { installSystemPackage, isExecutable, onPath } from "./system-packages";

let found: string | undefined | null = null;

export function findPgbouncer(): string | undefined {
  if (found !== null) return found;
  const given = process.env.PGBOUNCER_PATH;
  if (given) {
    const file = path.resolve(given);
    found = isExecutable(file)
      ? say(`pgbouncer: ${file} (PGBOUNCER_PATH)`, file)
      : say(`pgbouncer: PGBOUNCER_PATH is ${given}, which is not an executable file`);
    return found;
  }
  const system = working(onPath("pgbouncer"));
  if (system) {
    found = system;
    return found;
  }
  const { manager, failure } = installSystemPackage("pgbouncer");
  const installed = failure ? undefined : working(onPath("pgbouncer"));
  if (installed) {
    found = say(`pgbouncer: installed with ${manager} (${installed})`, installed);
    return found;
  }
  found = say(
    `pgbouncer: none found and none could be installed (${failure ?? "installed, but it does not start"}); install PgBouncer or set PGBOUNCER_PATH`,
  );
  return found;
}

/** `--version` weeds out a binary that cannot run here. */
function working(file: string | undefined): string | undefined {
  return file && spawnSync(file, ["--version"], { stdio: "ignore", timeout: 10_000 }).status === 0 ? file : undefined;
}

function say(line: string, file?: string): string | undefined {
  console.log(line);
  return file;
}
