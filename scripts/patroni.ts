/**
 * The high-availability stack that test/ha-failover.once.test.ts runs PostgreSQL 15 in: Patroni
 * (with patronictl), etcd (its consensus store) and HAProxy (routing to the leader), found or
 * installed like PgBouncer (scripts/pgbouncer.ts): PATRONI_PATH, ETCD_PATH and HAPROXY_PATH when
 * set, else the executables on the system, else the distribution's packages (apt-get install
 * patroni etcd-server haproxy as root here). Says on one line per tool what it did.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { findOrInstall, isExecutable, onPath } from "./system-packages";

export type HaStack = { patroni: string; patronictl: string; etcd: string; haproxy: string };

/** The three tools' executables, or undefined when one is missing (and why, on stdout). */
export function findHaStack(): HaStack | undefined {
  const tool = (name: string, variable: string, pkg: string, versionFlag: string) =>
    findOrInstall({
      name,
      variable,
      pkg,
      installed: () => working(onPath(name), versionFlag),
      usable: isExecutable,
      needs: "an executable file",
    });
  const patroni = tool("patroni", "PATRONI_PATH", "patroni", "--version");
  const etcd = tool("etcd", "ETCD_PATH", "etcd-server", "--version");
  const haproxy = tool("haproxy", "HAPROXY_PATH", "haproxy", "-v");
  if (!patroni || !etcd || !haproxy) return undefined;
  // patronictl ships beside patroni, in the same package.
  const patronictl = path.join(path.dirname(patroni), "patronictl");
  return isExecutable(patronictl) ? { patroni, patronictl, etcd, haproxy } : undefined;
}

/** Asking for its version weeds out a binary that cannot run here. */
function working(file: string | undefined, versionFlag: string): string | undefined {
  return file && spawnSync(file, [versionFlag], { stdio: "ignore", timeout: 10_000 }).status === 0 ? file : undefined;
}
