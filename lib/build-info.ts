/**
 * What a build records of itself for the server that serves it: the source commit, in
 * keyfob-build.json in the build's folder (written once by server/build.ts). The server reads it
 * rather than asking git: a git process at scrape time blocked the event loop, and the container
 * image has no repository to ask (.dockerignore leaves .git out; its build is given the commit as
 * the KEYFOB_COMMIT build argument instead).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const BUILD_INFO_FILE = "keyfob-build.json";
const UNKNOWN = "unknown";

/** Records `commit` in the build folder `dir`. */
export async function recordBuildInfo(dir: string, commit: string | undefined): Promise<void> {
  await writeFile(path.join(dir, BUILD_INFO_FILE), `${JSON.stringify({ commit: commit || UNKNOWN })}\n`);
}

/** The commit recorded in the build folder `dir`; "unknown" without one (`next dev`, or a build from before this file). */
export async function recordedCommit(dir: string): Promise<string> {
  try {
    const { commit } = JSON.parse(await readFile(path.join(dir, BUILD_INFO_FILE), "utf8")) as { commit?: unknown };
    return typeof commit === "string" && commit ? commit : UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}
