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
const SOURCE_DIRS = ["app", "components", "lib", "public"];
const ROOT_FILES = /^(next\.config\.mjs|postcss\.config\.mjs|tsconfig\.json|package\.json|package-lock\.json|proxy\.ts|instrumentation\.ts)$/;
const FINGERPRINT = path.join(projectRoot, ".next", "keyfob-sources.sha256");

/** A digest of every file the build is made of, by path and content. */
export function sourceFingerprint(): string {
  const hash = createHash("sha256");
  const files = readdirSync(projectRoot).filter((name) => ROOT_FILES.test(name));
  for (const dir of SOURCE_DIRS) {
    const full = path.join(projectRoot, dir);
    if (!existsSync(full)) continue;
    for (const entry of readdirSync(full, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && !entry.name.endsWith(".test.ts")) files.push(path.relative(projectRoot, path.join(entry.parentPath, entry.name)));
    }
  }
  for (const file of files.sort()) hash.update(`${file}\0`).update(readFileSync(path.join(projectRoot, file))).update("\0");
  return hash.digest("hex");
}

/** Why a build is needed, or undefined when the last build is of these sources. */
export function buildNeeded(): string | undefined {
  if (!existsSync(path.join(projectRoot, ".next", "BUILD_ID"))) return "no build yet";
  const last = existsSync(FINGERPRINT) ? readFileSync(FINGERPRINT, "utf8").trim() : "";
  return last === sourceFingerprint() ? undefined : "the sources changed since the last build";
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
  if (code === 0) await writeFile(FINGERPRINT, `${fingerprint}\n`);
  return code;
}
