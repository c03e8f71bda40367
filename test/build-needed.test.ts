/**
 * `npm start` rebuilds only when the build is missing or its sources changed (server/build.ts),
 * checked on a small project tree of its own; and each build, in a folder of its own, is kept for
 * as long as an instance may serve it. e2e/rebuild.spec.ts runs a real rebuild under an instance.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { buildNeeded, currentBuild, sourceFingerprint, switchBuild, useBuild } from "@/server/build";

let root: string;
let builds = 0;
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  builds = 0;
});

const write = async (file: string, text: string) => {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
};

/** A finished `next build` of the tree's sources as they are now, made current. */
async function built(): Promise<string> {
  const build = path.join(".next", "builds", `b${++builds}`);
  await write(path.join(build, "BUILD_ID"), "x");
  switchBuild(root, build, sourceFingerprint(root));
  return build;
}

it("builds when there is no build, or when a source or a locked dependency changed; not for tests or data", async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "keyfob-build-"));
  await write("package-lock.json", "{}");
  await write("app/page.tsx", "export default 1;");
  await write("lib/a.ts", "export const a = 1;");
  expect(buildNeeded(root)).toBe("no build yet");

  await write(".next/builds/unfinished/server/page.js", "x"); // a build that did not finish: no BUILD_ID, never current
  await write(".next/current", "unfinished\n");
  expect(buildNeeded(root)).toBe("no build yet");
  const build = await built();
  expect(currentBuild(root)).toBe(build);
  expect(buildNeeded(root)).toBeUndefined();

  await write("lib/a.test.ts", "test");
  await write("test/anything.ts", "test");
  await write(".data/postgres/file", "data");
  expect(buildNeeded(root)).toBeUndefined();

  await write("lib/a.ts", "export const a = 2;");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await built();
  await write("package-lock.json", '{"changed":true}');
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await built();
  await write("components/new.tsx", "export {}");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  // The hosted pages' message catalogs are compiled into the build too.
  await built();
  await write("messages/de.json", '{"login":{}}');
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await built();
  await write("i18n/locales.ts", "export const LOCALES = [];");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
});

it("keeps the current build, the one before, and every build a live process uses; deletes the rest", async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "keyfob-build-"));
  await write("lib/a.ts", "export const a = 1;");
  const ids = () => readdirSync(path.join(root, ".next", "builds")).sort();
  const [first, second] = [await built(), await built()];
  expect(ids()).toEqual(["b1", "b2"]);
  useBuild(root, first); // this process serves the first build
  const gone = spawnSync(process.execPath, ["-e", ""]).pid!; // a process that has exited
  await write(`.next/instances/${gone}`, `${path.basename(second)}\n`);

  await built();
  expect(ids()).toEqual(["b1", "b2", "b3"]);
  await built();
  expect(ids()).toEqual(["b1", "b3", "b4"]); // b2 was only used by a process that is gone
  expect(existsSync(path.join(root, ".next", "instances", String(gone)))).toBe(false);
  expect(existsSync(path.join(root, ".next", "instances", String(process.pid)))).toBe(true);
});
