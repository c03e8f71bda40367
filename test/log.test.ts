/**
 * lib/log.ts when the reader of stdout and stderr is gone (a supervisor or test runner that died):
 * a write then fails with EPIPE. The process must neither crash on it nor, with an
 * uncaughtException handler that logs, spin writing into the closed pipe; it goes on and
 * stops cleanly on SIGTERM.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";

const child = path.join(import.meta.dirname, "support/logging-child.ts");

async function closePipesThenStop(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const logger = spawn(process.execPath, ["--import", "tsx", child, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, KEYFOB_LOG: "" },
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    logger.on("exit", (code, signal) => resolve({ code, signal })),
  );
  await new Promise((resolve) => logger.stdout.once("data", resolve));
  logger.stdout.destroy();
  logger.stderr.destroy();
  await new Promise((resolve) => setTimeout(resolve, 1000)); // a thousand lines into the closed pipes
  logger.kill("SIGTERM");
  return exited;
}

it("logging into a closed stdout/stderr does not crash the process", async () => {
  expect(await closePipesThenStop([])).toEqual({ code: 0, signal: null });
}, 30_000);

it("nor makes a logging uncaughtException handler loop on EPIPE", async () => {
  expect(await closePipesThenStop(["--uncaught-handler"])).toEqual({ code: 0, signal: null });
}, 30_000);
