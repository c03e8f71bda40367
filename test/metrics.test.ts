/**
 * The metrics an operator scrapes: each of Keyfob's is in the documented list (docs/deployment.md),
 * and keyfob_build_info says which release, commit (as the build recorded it) and Node.js answer.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import client from "prom-client";
import { expect, it } from "vitest";
import { recordBuildInfo, recordedCommit } from "@/lib/build-info";
import { renderMetrics } from "@/lib/metrics";
import packageJson from "../package.json" with { type: "json" };

const documented = readFileSync(path.join(import.meta.dirname, "../docs/deployment.md"), "utf8");

// The build this process serves, as server/build.ts leaves it, before the first scrape reads it.
const build = mkdtempSync(path.join(os.tmpdir(), "keyfob-build-"));
const COMMIT = "0123456789abcdef0123456789abcdef01234567";
await recordBuildInfo(build, COMMIT);
process.env.KEYFOB_DIST_DIR = build;

it("documents every metric Keyfob registers", async () => {
  const names = (await client.register.getMetricsAsJSON()).map((metric) => metric.name).filter((name) => name.startsWith("keyfob_"));
  expect(names.length).toBeGreaterThan(10);
  expect(names.filter((name) => !documented.includes(`\`${name}`))).toEqual([]);
});

it("has keyfob_build_info: 1, labelled with the version, the commit the build recorded and Node.js's version", async () => {
  expect(await renderMetrics()).toContain(
    `keyfob_build_info{version="${packageJson.version}",commit="${COMMIT}",node="${process.version}"} 1\n`,
  );
});

it("reads the commit as recorded, and says unknown where the build recorded none", async () => {
  expect(await recordedCommit(build)).toBe(COMMIT);
  await recordBuildInfo(build, undefined);
  expect(await recordedCommit(build)).toBe("unknown");
  expect(await recordedCommit(mkdtempSync(path.join(os.tmpdir(), "keyfob-no-build-")))).toBe("unknown");
});
