/**
 * The metrics an operator scrapes: each of Keyfob's is in the documented list (docs/deployment.md),
 * and keyfob_build_info says which release, commit and Node.js answer.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import client from "prom-client";
import { expect, it } from "vitest";
import { renderMetrics } from "@/lib/metrics";
import packageJson from "../package.json" with { type: "json" };

const documented = readFileSync(path.join(import.meta.dirname, "../docs/deployment.md"), "utf8");

it("documents every metric Keyfob registers", async () => {
  const names = (await client.register.getMetricsAsJSON()).map((metric) => metric.name).filter((name) => name.startsWith("keyfob_"));
  expect(names.length).toBeGreaterThan(10);
  expect(names.filter((name) => !documented.includes(`\`${name}`))).toEqual([]);
});

it("has keyfob_build_info: 1, labelled with the version, the commit and Node.js's version", async () => {
  const commit = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  expect(await renderMetrics()).toContain(
    `keyfob_build_info{version="${packageJson.version}",commit="${commit}",node="${process.version}"} 1\n`,
  );
});
