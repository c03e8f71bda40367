/**
 * `npm start` builds only when it must: when there is no build, or when what the build is made of
 * (the app's sources, configuration and locked dependencies) changed since the last one. A restart
 * of an unchanged checkout then serves within seconds instead of rebuilding for 30-60 s.
 *
 * Every build goes to a folder of its own, .next/builds/<id> (Next's distDir, next.config.mjs),
 * and .next/current names the build to serve, switched by a rename once the build has succeeded. An
 * instance serves the build that was current when it started for as long as it runs: Next.js loads
 * a build's chunks lazily, so rewriting the one folder under a running instance made it answer 500
 * (ChunkLoadError) until it was restarted. Each process records the build it uses in
 * .next/instances/<pid>; a build is deleted once it is neither current, nor the one before (an
 * instance may be starting on it), nor used by a live process.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { recordBuildInfo } from "../lib/build-info";
import { projectRoot as projectRootOf } from "../lib/project-root";
import { buildProgress } from "./build-progress";

const projectRoot = projectRootOf(import.meta.dirname);
/** What Next.js compiles: these folders (tests aside), and the configuration files at the root. */
const SOURCE_DIRS = ["app", "components", "i18n", "lib", "messages", "public"];
const ROOT_FILES =
  /^(next\.config\.mjs|postcss\.config\.mjs|tsconfig\.json|package\.json|package-lock\.json|proxy\.ts|instrumentation\.ts)$/;
const BUILDS = path.join(".next", "builds");
const FINGERPRINT = "keyfob-sources.sha256";
/** Read by next.config.mjs: the folder `next build` writes and an instance serves, relative to the project. */
const DIST_DIR_VARIABLE = "KEYFOB_DIST_DIR";
const currentFile = (root: string) => path.join(root, ".next", "current");
const instancesDir = (root: string) => path.join(root, ".next", "instances");

/** A digest of every file the build is made of, by path and content. */
export function sourceFingerprint(root = projectRoot): string {
  const hash = createHash("sha256");
  const files = readdirSync(root).filter((name) => ROOT_FILES.test(name));
  for (const dir of SOURCE_DIRS) {
    const full = path.join(root, dir);
    if (!existsSync(full)) continue;
    for (const entry of readdirSync(full, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && !entry.name.endsWith(".test.ts")) files.push(path.relative(root, path.join(entry.parentPath, entry.name)));
    }
  }
  for (const file of files.sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(path.join(root, file)))
      .update("\0");
  return hash.digest("hex");
}

const readText = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim() : "");

/** The current build's folder relative to `root` (.next/builds/<id>), or undefined when there is none. */
export function currentBuild(root = projectRoot): string | undefined {
  const id = readText(currentFile(root));
  return id && existsSync(path.join(root, BUILDS, id, "BUILD_ID")) ? path.join(BUILDS, id) : undefined;
}

/** The build folder this process serves or builds (Next's distDir), absolute; `.next` under `next dev`. */
export function distDir(root = projectRoot): string {
  return path.join(root, process.env[DIST_DIR_VARIABLE] || ".next");
}

/** Why a build is needed, or undefined when the current build is of these sources. */
export function buildNeeded(root = projectRoot): string | undefined {
  const build = currentBuild(root);
  if (!build) return "no build yet";
  return readText(path.join(root, build, FINGERPRINT)) === sourceFingerprint(root) ? undefined : "the sources changed since the last build";
}

/** What the launcher says before it builds: that it builds, why, and for about how long (measured on 2 cores). */
export function buildAnnouncement(reason: string): string {
  const first = reason === "no build yet";
  return `${first ? "First start: building Keyfob" : `Building Keyfob (${reason})`}, which takes 1-3 minutes on 2 cores; ${
    first ? "later starts serve within seconds unless the sources change" : "it serves once the build is done"
  }.`;
}

/** Makes `build` (a folder under .next/builds) the one that instances starting from now on serve. */
export function switchBuild(root: string, build: string, fingerprint: string): void {
  writeFileSync(path.join(root, build, FINGERPRINT), `${fingerprint}\n`);
  const previous = readText(currentFile(root));
  const next = `${currentFile(root)}.${process.pid}`;
  writeFileSync(next, `${path.basename(build)}\n`);
  renameSync(next, currentFile(root)); // atomic: a reader sees the old build or the new one
  removeUnusedBuilds(root, previous);
}

/** Records that this process uses `build`, for as long as it runs, so that no other process's clean-up deletes it. */
export function useBuild(root: string, build: string): void {
  const file = path.join(instancesDir(root), String(process.pid));
  mkdirSync(instancesDir(root), { recursive: true });
  writeFileSync(file, `${path.basename(build)}\n`);
  process.once("exit", () => rmSync(file, { force: true }));
}

/** Serves the current build from now on in this process (next.config.mjs reads its folder). */
export function serveCurrentBuild(root = projectRoot): string {
  const build = currentBuild(root);
  if (!build) throw new Error("there is no build to serve: run `npm run build` (or `npm start`, which builds when needed)");
  try {
    useBuild(root, build);
  } catch (error) {
    // A folder this process may not write (the container's, owned by root) is never rebuilt under it.
    if (!["EACCES", "EPERM", "EROFS"].includes((error as NodeJS.ErrnoException).code ?? "")) throw error;
  }
  process.env[DIST_DIR_VARIABLE] = build;
  return build;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // another user's process
  }
}

/** Deletes the builds that are not current, not `previous`, and not used by a live process (other builds' folders included). */
function removeUnusedBuilds(root: string, previous: string): void {
  const keep = new Set([readText(currentFile(root)), previous]);
  for (const name of existsSync(instancesDir(root)) ? readdirSync(instancesDir(root)) : []) {
    const file = path.join(instancesDir(root), name);
    if (alive(Number(name))) keep.add(readText(file));
    else rmSync(file, { force: true });
  }
  for (const id of readdirSync(path.join(root, BUILDS)))
    if (!keep.has(id)) rmSync(path.join(root, BUILDS, id), { recursive: true, force: true });
}

/** The commit checked out at `root`, or undefined where there is no git checkout (the image's build: KEYFOB_COMMIT). */
function checkoutCommit(root: string): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8", timeout: 10_000 }, (error, stdout) =>
      resolve(error ? undefined : stdout.trim()),
    ),
  );
}

/**
 * Runs `next build` into a new folder and, when it succeeds, records the commit it was built from
 * (KEYFOB_COMMIT, else the checkout's: lib/build-info.ts) and makes it the current build. Resolves
 * with the exit code. Next's output is shown with the time since the build began, and a heartbeat
 * while it is silent (server/build-progress.ts).
 */
export async function build(env: NodeJS.ProcessEnv, root = projectRoot): Promise<number> {
  const fingerprint = sourceFingerprint(root);
  const build = path.join(BUILDS, `${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}-${process.pid}`);
  mkdirSync(path.join(root, build), { recursive: true });
  useBuild(root, build);
  const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");
  const child = spawn(process.execPath, [nextBin, "build"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...env, NEXT_TELEMETRY_DISABLED: "1", [DIST_DIR_VARIABLE]: build },
  });
  // Its progress on stderr: stdout is the server's JSON log when `npm start` builds.
  const progress = buildProgress({ write: (text) => process.stderr.write(text), tty: process.stderr.isTTY });
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on("line", progress.line);
  const heartbeat = setInterval(progress.tick, 1000);
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  clearInterval(heartbeat);
  progress.end();
  if (code === 0) {
    await recordBuildInfo(path.join(root, build), env.KEYFOB_COMMIT || (await checkoutCommit(root)));
    switchBuild(root, build, fingerprint);
  } else rmSync(path.join(root, build), { recursive: true, force: true });
  return code;
}
