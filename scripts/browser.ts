/**
 * The Chromium that Playwright launches (playwright.config.ts reads CHROMIUM_PATH), found or
 * installed so that `npm test` works on a fresh machine. In this order:
 *   1. CHROMIUM_PATH, when set: used as given, or a clear error;
 *   2. a system Chromium or Chrome (on PATH, then the usual /usr/bin paths);
 *   3. Playwright's own browser, when it was already downloaded;
 *   4. Playwright's installer, then the system package manager (apt-get, dnf, apk), as root or
 *      through `sudo -n`.
 * Prints one line saying what it did, or how to provide a browser when nothing worked.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { installSystemPackage, isExecutable, onPath, reason } from "./system-packages";

// playwright-core as @playwright/test sees it (the version whose browsers it expects).
const playwright = createRequire(createRequire(import.meta.url).resolve("@playwright/test"));
const SYSTEM_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** Returns the browser's absolute path, or undefined (after saying why) when there is none. */
export function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given) {
    const file = path.resolve(given);
    if (isExecutable(file)) return say(`browser: ${file} (CHROMIUM_PATH)`, file);
    return say(
      `browser: CHROMIUM_PATH is ${given}, which is not an executable file; point it at a Chromium or Chrome executable, or unset it to let npm test find or install one.`,
    );
  }

  const found = systemChromium() ?? playwrightChromium();
  if (found) return say(`browser: ${found.file} (${found.kind})`, found.file);

  const failures: string[] = [];
  const downloadFailure = installWithPlaywright();
  const downloaded = downloadFailure ? undefined : playwrightChromium()?.file;
  if (downloaded) return say(`browser: installed chromium with Playwright (${downloaded})`, downloaded);
  failures.push(`playwright: ${downloadFailure ?? "installed, but its browser does not start (missing system libraries?)"}`);

  const { manager, failure: installFailure } = installSystemPackage("chromium");
  const installed = installFailure ? undefined : systemChromium()?.file;
  if (installed) return say(`browser: installed chromium with ${manager} (${installed})`, installed);
  failures.push(`${manager ?? "package manager"}: ${installFailure ?? "installed, but no working chromium appeared"}`);

  return say(
    `browser: no Chromium found and none could be installed (${failures.join("; ")}); install Chromium or Chrome, or set CHROMIUM_PATH to its executable.`,
  );
}

function say(line: string, file?: string): string | undefined {
  console.log(line);
  return file;
}

/** `--version` weeds out stubs (Ubuntu's snap wrapper) and downloads that lack system libraries. */
function starts(file: string): boolean {
  return spawnSync(file, ["--version"], { stdio: "ignore", timeout: 30_000 }).status === 0;
}

function systemChromium(): { file: string; kind: string } | undefined {
  for (const name of SYSTEM_NAMES) {
    const file = onPath(name);
    if (file && starts(file)) return { file, kind: "system" };
  }
  return undefined;
}

function playwrightChromium(): { file: string; kind: string } | undefined {
  const { chromium } = playwright("playwright-core") as { chromium: { executablePath(): string } };
  const file = chromium.executablePath();
  return isExecutable(file) && starts(file) ? { file, kind: "Playwright's" } : undefined;
}

/** Playwright's downloader; fails within seconds when its CDN cannot be reached. */
function installWithPlaywright(): string | undefined {
  const cli = path.join(path.dirname(playwright.resolve("playwright-core/package.json")), "cli.js");
  const result = spawnSync(process.execPath, [cli, "install", "chromium"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 180_000,
    // Give up on a silent network quickly instead of Playwright's 30 s per attempt.
    env: { ...process.env, PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT: "10000" },
  });
  return result.status === 0 ? undefined : reason(result);
}
