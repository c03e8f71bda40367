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
import { stripVTControlCharacters } from "node:util";
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
/** vitest's and Playwright's JSON reports, read back so the summary at the very end names what failed (CI shows only the tail). */
const VITEST_REPORT = ".data/vitest-report.json";
const PLAYWRIGHT_REPORT = ".data/playwright-report.json";
let failedTests: string[] = [];

const firstLine = (text = "") =>
  stripVTControlCharacters(text)
    .split("\n")
    .find((line) => line.trim())
    ?.trim()
    .slice(0, 300) ?? "";

async function vitestFailures(): Promise<string[]> {
  type Report = {
    testResults?: {
      name: string;
      message?: string;
      assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[];
    }[];
  };
  const report = JSON.parse(await readFile(VITEST_REPORT, "utf8").catch(() => "{}")) as Report;
  return (report.testResults ?? []).flatMap((file) => {
    const name = path.relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    if (failed.length === 0) return file.message ? [`${name}: ${firstLine(file.message)}`] : [];
    return failed.map((test) => `${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  });
}

async function playwrightFailures(): Promise<string[]> {
  type Suite = {
    title: string;
    file?: string;
    suites?: Suite[];
    specs?: { title: string; line: number; tests: { results: { status: string; error?: { message?: string } }[] }[] }[];
  };
  const report = JSON.parse(await readFile(PLAYWRIGHT_REPORT, "utf8").catch(() => "{}")) as {
    suites?: Suite[];
    errors?: { message?: string }[];
  };
  const failures: string[] = (report.errors ?? []).map((error) => firstLine(error.message));
  const walk = (suite: Suite, file: string, titles: string[]) => {
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests)
        for (const result of test.results)
          if (result.status !== "passed" && result.status !== "skipped")
            failures.push(
              `${file}:${spec.line} > ${[...titles, spec.title].join(" > ")} (${result.status}): ${firstLine(result.error?.message)}`,
            );
    for (const child of suite.suites ?? []) walk(child, file, [...titles, child.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, suite.file ?? suite.title, []);
  return failures;
}

async function main() {
  if (!process.env.SKIP_UNIT) {
    const code = await run(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${VITEST_REPORT}`]);
    record("vitest", code);
    if (code !== 0) failedTests = (await vitestFailures()).map((failure) => `vitest failed: ${failure}`);
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
      const code = await run(bin("playwright"), ["test", "--reporter=list,json", ...process.argv.slice(2)], {
        ...env,
        PLAYWRIGHT_JSON_OUTPUT_NAME: PLAYWRIGHT_REPORT,
      });
      record("playwright", code);
      if (code !== 0) failedTests.push(...(await playwrightFailures()).map((failure) => `playwright failed: ${failure}`));
    } finally {
      await database.stop();
    }
  }

  const failed = results.filter(({ code }) => code !== 0);
  const summary = [
    ...results.map(
      ({ name, code, seconds }) => `${name} (Node ${process.versions.node}, ${seconds} s): ${code === 0 ? "ok" : `FAILED (exit ${code})`}`,
    ),
    ...failedTests.map((failure) => `  ${failure}`),
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
