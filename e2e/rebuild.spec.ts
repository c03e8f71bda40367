/**
 * `npm start` rebuilds while another instance (`npm run serve`) serves from the same folder: that
 * instance keeps answering its pages, their scripts and the protocol endpoints, without a 500,
 * through the whole build and after it; the rebuilt instance serves the new build. It once
 * answered 500 (ChunkLoadError) until restarted, the build having rewritten the files it loads
 * lazily.
 *
 * Both run in a copy of this checkout (its sources, its build, node_modules hard-linked), where a
 * source can change without touching the checkout: a real rebuild, a few minutes of this suite.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { type Instance, ready, startInstance } from "./support/instances";

const ROOT = path.resolve(import.meta.dirname, "..");
/** Not copied: what the run writes, what is hard-linked instead, the build caches (a cold rebuild) and who uses which build. */
const LEFT_OUT =
  /^(\.git|\.data|node_modules|test-results|playwright-report|e2e\/artifacts|\.next\/instances|\.next\/builds\/[^/]+\/cache)$/;
/** Pages (each loaded lazily by the server on its first request) and protocol endpoints. */
const PAGES = ["/", "/admin/login", "/admin/signed-out", "/admin/forbidden", "/admin/signin-failed", "/auth/error"];
const PROTOCOL = ["/.well-known/openid-configuration", "/keys", "/healthz/ready"];

let copy: string;
const running: Instance[] = [];

test.afterAll(() => {
  for (const instance of running) instance.process.kill("SIGKILL");
  if (copy) rmSync(copy, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

/** What an instance answers that a browser or a client would not accept: 5xx, a page's missing script, no answer. */
async function failures(instance: Instance, page: string): Promise<string[]> {
  const failed: string[] = [];
  const get = async (route: string, init?: RequestInit) => {
    const response = await fetch(`${instance.url}${route}`, { ...init, redirect: "manual", signal: AbortSignal.timeout(30_000) }).catch(
      (error: Error) => error,
    );
    if (response instanceof Error) failed.push(`${route}: ${response.message}`);
    else if (response.status >= 500) failed.push(`${route}: ${response.status}`);
    return response instanceof Error ? undefined : response;
  };
  const html = await (await get(page))?.text();
  for (const script of new Set(html?.match(/\/_next\/static\/[^"'\s]+\.js/g) ?? [])) {
    const response = await get(script);
    if (response && response.status !== 200) failed.push(`${script} (of ${page}): ${response.status}`);
  }
  for (const route of PROTOCOL) await get(route);
  await get("/token", {
    method: "POST",
    body: new URLSearchParams({ grant_type: "authorization_code", client_id: "unknown", code: "unknown" }),
  });
  return failed;
}

test("an instance keeps serving while npm start rebuilds in its folder", async () => {
  test.setTimeout(30 * 60_000); // a real build: about a minute on a quiet machine, ten when it is busy
  copy = mkdtempSync(path.join(os.tmpdir(), "keyfob-rebuild-"));
  cpSync(ROOT, copy, { recursive: true, filter: (source) => !LEFT_OUT.test(path.relative(ROOT, source)) });
  execFileSync("cp", ["-al", path.join(ROOT, "node_modules"), path.join(copy, "node_modules")]);
  const env = { DATABASE_URL: process.env.DATABASE_URL!, KEYFOB_SECRET: process.env.KEYFOB_SECRET! };

  const served = readFileSync(path.join(copy, ".next", "current"), "utf8").trim();
  const serving = await startInstance("npm run serve", env, { cwd: copy });
  running.push(serving);
  await ready(serving);
  // Ready means the protocol endpoints answer; Next.js lists public/ when it is prepared, which a
  // page waits for. Without this, a busy machine let it list the file written below (a 200).
  expect((await fetch(`${serving.url}/admin/signed-out`)).status).toBe(200);

  // A source changed since the build: npm start rebuilds before it serves.
  mkdirSync(path.join(copy, "public"), { recursive: true });
  writeFileSync(path.join(copy, "public", "rebuilt.txt"), "rebuilt\n");
  const rebuilding = await startInstance("npm start", env, { cwd: copy, args: ["--build"] });
  running.push(rebuilding);
  const rebuilt = ready(rebuilding, 30 * 60_000);
  let done = false;
  void rebuilt.finally(() => (done = true)).catch(() => undefined);

  const failed = new Set<string>();
  let rounds = 0;
  while (!done) {
    for (const failure of await failures(serving, PAGES[rounds++ % PAGES.length])) failed.add(failure);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await rebuilt;
  expect(rebuilding.output.join("")).toContain("Building Keyfob (the sources changed since the last build)");
  expect(rounds, "requests made during the build").toBeGreaterThan(PAGES.length);
  for (const page of PAGES) for (const failure of await failures(serving, page)) failed.add(failure);
  expect([...failed], serving.output.join("")).toEqual([]);

  // Each instance serves its own build: the old one without the new file, the rebuilt one with it.
  expect((await fetch(`${serving.url}/rebuilt.txt`)).status).toBe(404);
  expect((await fetch(`${rebuilding.url}/rebuilt.txt`)).status).toBe(200);
  for (const page of PAGES) expect(await failures(rebuilding, page)).toEqual([]);

  for (const instance of [serving, rebuilding]) instance.process.kill("SIGTERM");
  expect(await Promise.all([serving.exited, rebuilding.exited])).toEqual([0, 0]);
  // The new build is current, and the one the old instance served is still there.
  const current = readFileSync(path.join(copy, ".next", "current"), "utf8").trim();
  expect(current).not.toBe(served);
  expect(readdirSync(path.join(copy, ".next", "builds"))).toEqual(expect.arrayContaining([served, current]));
});
