/**
 * The first `npm start` builds for minutes, and Next says nothing for most of its compilation: the
 * launcher stamps Next's lines with the time so far and, while Next is silent, writes a heartbeat
 * naming the step still running (server/build-progress.ts). Driven by a clock of the test's own.
 */
import { expect, it } from "vitest";
import { buildProgress } from "@/server/build-progress";
import { buildAnnouncement } from "@/server/build";

function driven(tty: boolean) {
  let time = 0;
  let out = "";
  const progress = buildProgress({ write: (text) => (out += text), now: () => time, tty, quietMs: 15_000 });
  return {
    progress,
    advance: (ms: number) => {
      for (let t = 0; t < ms; t += 1000) {
        time += 1000;
        progress.tick();
      }
    },
    output: () => out,
  };
}

it("stamps Next's lines with the seconds so far, and names the silent step in a heartbeat line every 15 s off a terminal", () => {
  const { progress, advance, output } = driven(false);
  progress.line("   ▲ Next.js 16.4.5 (Turbopack)");
  progress.line("");
  advance(2000);
  progress.line("   Creating an optimized production build ...");
  advance(14_000);
  expect(output()).toBe("[   0 s] ▲ Next.js 16.4.5 (Turbopack)\n[   2 s] Creating an optimized production build ...\n");
  advance(46_000);
  progress.line(" \u001b[32m✓\u001b[39m Compiled successfully in 58s");
  advance(1000);
  progress.end();
  expect(output()).toBe(
    [
      "[   0 s] ▲ Next.js 16.4.5 (Turbopack)",
      "[   2 s] Creating an optimized production build ...",
      "[  17 s] Creating an optimized production build: still working…",
      "[  32 s] Creating an optimized production build: still working…",
      "[  47 s] Creating an optimized production build: still working…",
      "[  62 s] Creating an optimized production build: still working…",
      "[  62 s] ✓ Compiled successfully in 58s",
      "",
    ].join("\n"),
  );
});

it("on a terminal, keeps one status line with the time, rewritten each second and cleared before Next's next line", () => {
  const { progress, advance, output } = driven(true);
  progress.line("   Collecting page data ...");
  advance(2000);
  progress.line("   Finalizing page optimization ...");
  progress.end();
  expect(output()).toBe(
    "[   0 s] Collecting page data ...\n" +
      "\r\u001b[K[   1 s] Collecting page data: still working…" +
      "\r\u001b[K[   2 s] Collecting page data: still working…" +
      "\r\u001b[K[   2 s] Finalizing page optimization ...\n",
  );
});

it("says before the first build that it builds, and for about how long", () => {
  expect(buildAnnouncement("no build yet")).toMatch(/^First start: building Keyfob.*minutes/);
  expect(buildAnnouncement("the sources changed since the last build")).toMatch(/^Building Keyfob \(the sources changed.*minutes/);
});
