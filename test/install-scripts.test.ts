/**
 * package.json's `allowScripts` names every installed dependency that has an install script, as
 * allowed or denied (npm 11 runs an unreviewed one with a warning, and may refuse it later): a
 * dependency update that brings a new install script fails here until someone decides about it.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const npm = async (...args: string[]) =>
  JSON.parse((await promisify(execFile)("npm", [...args, "--json"], { cwd: root, encoding: "utf8" })).stdout);

// Each npm command reads the whole dependency tree: about 5 s, several times that on a busy machine.
it("has decided about every dependency's install script, and about no package that has none", { timeout: 120_000 }, async () => {
  const [pending, stale] = await Promise.all([npm("install-scripts", "ls"), npm("install-scripts", "prune", "--dry-run")]);
  expect(pending.allowScripts.map((entry: { name: string }) => entry.name)).toEqual([]);
  expect(stale.allowScripts.removed).toEqual([]);
});
