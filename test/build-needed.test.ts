/**
 * `npm start` rebuilds only when the build is missing or its sources changed (server/build.ts),
 * checked on a small project tree of its own.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { buildNeeded, recordBuild } from "@/server/build";

let root: string;
afterEach(() => rm(root, { recursive: true, force: true }));

it("builds when there is no build, or when a source or a locked dependency changed; not for tests or data", async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "keyfob-build-"));
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  };
  await write("package-lock.json", "{}");
  await write("app/page.tsx", "export default 1;");
  await write("lib/a.ts", "export const a = 1;");
  expect(buildNeeded(root)).toBe("no build yet");

  await write(".next/BUILD_ID", "x");
  expect(buildNeeded(root)).toBe("the sources changed since the last build"); // a build of unknown sources
  await recordBuild(root);
  expect(buildNeeded(root)).toBeUndefined();

  await write("lib/a.test.ts", "test");
  await write("test/anything.ts", "test");
  await write(".data/postgres/file", "data");
  expect(buildNeeded(root)).toBeUndefined();

  await write("lib/a.ts", "export const a = 2;");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await recordBuild(root);
  await write("package-lock.json", '{"changed":true}');
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await recordBuild(root);
  await write("components/new.tsx", "export {}");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  // The hosted pages' message catalogs are compiled into the build too.
  await recordBuild(root);
  await write("messages/de.json", '{"login":{}}');
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
  await recordBuild(root);
  await write("i18n/locales.ts", "export const LOCALES = [];");
  expect(buildNeeded(root)).toBe("the sources changed since the last build");
});
