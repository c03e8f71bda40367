/**
 * `npm test`: everything, on real parts.
 *   1. vitest: unit and integration tests (real PostgreSQL, real signatures, a local chain);
 *   2. next build, then Playwright against the built server on its own embedded PostgreSQL, in
 *      a Chromium found or installed by scripts/browser.ts (passed on as CHROMIUM_PATH).
 * Extra arguments go to Playwright (e.g. `npm test -- --grep demo`); SKIP_UNIT=1 runs only step 2,
 * and SKIP_BUILD=1 reuses the last build (when only tests changed). The summary at the end, which
 * names the Node.js that ran each step, is also written to .data/test-summary-node<major>.txt, for
 * .ci/run to show both of its runs at its end.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";
import { build } from "../server/build";
import { findChromium } from "./browser";
import { freePort } from "./free-port";

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit", env: { ...env, NEXT_TELEMETRY_DISABLED: "1" } });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const bin = (name: string) => path.resolve("node_modules/.bin", name);
const results: { name: string; code: number; seconds: number }[] = [];
let stepStarted = Date.now();
/** A step's outcome, and how long it took since the previous one ended (the steps run one after the other). */
function record(name: string, code: number) {
  results.push({ name, code, seconds: Math.round((Date.now() - stepStarted) / 1000) });
  stepStarted = Date.now();
}
/** vitest's JSON report, read back so the summary at the very end names what failed (CI shows only the tail). */
const VITEST_REPORT = ".data/vitest-report.json";
let failedTests: string[] = [];

async function vitestFailures(): Promise<string[]> {
  type Report = {
    testResults?: {
      name: string;
      message?: string;
      assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[];
    }[];
  };
  const report = JSON.parse(await readFile(VITEST_REPORT, "utf8").catch(() => "{}")) as Report;
  const firstLine = (text = "") => text.split("\n")[0].slice(0, 300);
  return (report.testResults ?? []).flatMap((file) => {
    const name = path.relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    if (failed.length === 0) return file.message ? [`${name}: ${firstLine(file.message)}`] : [];
    return failed.map((test) => `${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  });
}

async function main() {
  if (!process.env.SKIP_UNIT) {
    const code = await run(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${VITEST_REPORT}`]);
    record("vitest", code);
    if (code !== 0) failedTests = await vitestFailures();
  }

  // Found (or installed) before the build; without one only the Playwright step fails.
  const chromium = findChromium();
  const built = process.env.SKIP_BUILD ? 0 : await build(process.env); // recorded: npm start then reuses it
  record("next build", built);
  if (built === 0 && !chromium) record("playwright", 1);
  if (built === 0 && chromium) {
    const dir = path.resolve(".data/e2e");
    await rm(dir, { recursive: true, force: true });
    const database = await startEmbeddedPostgres(dir, await freePort());
    try {
      await migrateDatabase(database.url);
      const env = {
        ...process.env,
        DATABASE_URL: database.url,
        KEYFOB_SECRET: randomBytes(32).toString("base64url"),
        E2E_PORT: String(await freePort()),
        CHROMIUM_PATH: chromium,
      };
      record("playwright", await run(bin("playwright"), ["test", ...process.argv.slice(2)], env));
    } finally {
      await database.stop();
    }
  }

  const failed = results.filter(({ code }) => code !== 0);
  const summary = [
    ...results.map(
      ({ name, code, seconds }) => `${name} (Node ${process.versions.node}, ${seconds} s): ${code === 0 ? "ok" : `FAILED (exit ${code})`}`,
    ),
    ...failedTests.map((failure) => `  vitest failed: ${failure}`),
  ].join("\n");
  console.log(`\n${summary}`);
  await mkdir(".data", { recursive: true });
  await writeFile(`.data/test-summary-node${process.versions.node.split(".")[0]}.txt`, `${summary}\n`);
  process.exit(failed.length > 0 ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
