/**
 * Finding executables and installing what `npm test` needs from the system's package manager
 * (Chromium for Playwright, PgBouncer for the pooled-database tests, PostgreSQL 15 for the backup
 * tests): as root, or through `sudo -n` (never a password prompt).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** An executable by name: on PATH, then in the usual system folders (where sbin is not on PATH). */
export function onPath(name: string): string | undefined {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  return [...dirs, "/usr/bin", "/usr/sbin"].map((dir) => path.join(dir, name)).find(isExecutable);
}

/** Tail of a failed command's output, on one line. */
export function reason(result: ReturnType<typeof spawnSync>): string {
  if (result.error) return (result.error as NodeJS.ErrnoException).code === "ETIMEDOUT" ? "timed out" : result.error.message;
  const lines = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.split("\n").map((l) => l.trim());
  return lines.find((l) => /error|fail/i.test(l)) ?? lines.find(Boolean) ?? `exit ${result.status}`;
}

const MANAGERS: Record<string, (pkg: string) => string[][]> = {
  "apt-get": (pkg) => [
    ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "update", "-qq"],
    ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", pkg],
  ],
  dnf: (pkg) => [["dnf", "install", "-y", pkg]],
  apk: (pkg) => [["apk", "add", "--no-cache", pkg]],
};

/** Installs a distribution package; undefined when it worked, else why not. */
export function installSystemPackage(pkg: string): { manager?: string; failure?: string } {
  const manager = Object.keys(MANAGERS).find(onPath);
  if (!manager) return { failure: "no known package manager (apt-get, dnf, apk)" };
  const root = process.getuid?.() === 0;
  if (!root && !onPath("sudo")) return { manager, failure: "needs root, and sudo is not installed" };
  for (const step of MANAGERS[manager](pkg)) {
    const command = root ? step : ["sudo", "-n", ...step];
    const result = spawnSync(command[0], command.slice(1), { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
    if (result.status !== 0) return { manager, failure: reason(result) };
  }
  return { manager };
}

/** A system tool a test needs, as findOrInstall looks for it. */
export type SystemTool = {
  /** How the line it prints starts: `pgbouncer`, `postgresql 15`. */
  name: string;
  /** The environment variable that names it instead (a path: `usable` decides). */
  variable: string;
  /** The distribution package that provides it. */
  pkg: string;
  /** What is installed now, if it works here. */
  installed(): string | undefined;
  /** Whether the path given in `variable` works; `needs` says what it must be, for the error line. */
  usable(file: string): boolean;
  needs: string;
};

const tools = new Map<string, string | undefined>();

/**
 * A tool's path (once per process): the environment variable when set, else what is installed,
 * else what installing the package gives. Says on one line what it did, or why there is none.
 */
export function findOrInstall(tool: SystemTool): string | undefined {
  if (!tools.has(tool.name)) tools.set(tool.name, look(tool));
  return tools.get(tool.name);
}

function look(tool: SystemTool): string | undefined {
  const say = (line: string, file?: string) => {
    console.log(`${tool.name}: ${line}`);
    return file;
  };
  const given = process.env[tool.variable];
  if (given) {
    const file = path.resolve(given);
    return tool.usable(file) ? say(`${file} (${tool.variable})`, file) : say(`${tool.variable} is ${given}, which is not ${tool.needs}`);
  }
  const present = tool.installed();
  if (present) return present;
  const { manager, failure } = installSystemPackage(tool.pkg);
  const installed = failure ? undefined : tool.installed();
  if (installed) return say(`installed with ${manager} (${installed})`, installed);
  return say(
    `none found and none could be installed (${failure ?? "installed, but it does not work"}); install ${tool.pkg} or set ${tool.variable}`,
  );
}
