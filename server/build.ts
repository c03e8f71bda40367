/**
 * `npm start` builds only when it must: when there is no build, or when what the build is made of
 * (the app's sources, configuration and locked dependencies) changed since the last one. A restart
 * of an unchanged checkout then serves within seconds instead of rebuilding for 30-60 s.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

const projectRoot = path.resolve(import.meta.dirname, "..");
/** What Next.js compiles: these folders (tests aside), and the configuration files at the root. */
const SOURCE_DIRS = ["app", "components", "i18n", "lib", "messages", "public"];
const ROOT_FILES = /^(next\.config\.mjs|postcss\.config\.mjs|tsconfig\.json|package\.json|package-lock\.json|proxy\.ts|instrumentation\.ts)$/;
const fingerprintFile = (root: string) => path.join(root, ".next", "keyfob-sources.sha256");

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
  for (const file of files.sort()) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update("\0");
  return hash.digest("hex");
}

/** Why a build is needed, or undefined when the last build is of these sources. */
export function buildNeeded(root = projectRoot): string | undefined {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) return "no build yet";
  const last = existsSync(fingerprintFile(root)) ? readFileSync(fingerprintFile(root), "utf8").trim() : "";
  return last === sourceFingerprint(root) ? undefined : "the sources changed since the last build";
}

/** Records that the build in `root` is of its current sources. */
export async function recordBuild(root = projectRoot, fingerprint = sourceFingerprint(root)): Promise<void> {
  await writeFile(fingerprintFile(root), `${fingerprint}\n`);
}

/** Runs `next build` and records what it was built from. Resolves with the exit code. */
export async function build(env: NodeJS.ProcessEnv): Promise<number> {
  const fingerprint = sourceFingerprint();
  const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");
  const code = await new Promise<number>((resolve) =>
    spawn(process.execPath, [nextBin, "build"], { cwd: projectRoot, stdio: "inherit", env: { ...env, NEXT_TELEMETRY_DISABLED: "1" } }).on("exit", (c) =>
      resolve(c ?? 1),
    ),
  );
  if (code === 0) await recordBuild(projectRoot, fingerprint);
  return code;
}
