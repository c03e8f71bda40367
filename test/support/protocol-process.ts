/**
 * Starts test/support/protocol-instance.ts in a process of its own on a free port (its own pool,
 * caches and event loop; the test run's database unless `env` says otherwise), for tests that need
 * a second real server rather than a second Keyfob in the test's process, or one they can kill.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { freePort } from "../../scripts/free-port";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A running instance: where it listens, its process (to kill it), its last stderr, and its exit. */
export type ProtocolProcess = {
  url: string;
  child: ChildProcess;
  /** The last 20,000 characters it wrote to stderr. */
  stderr: () => string;
  /** Its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGTERM, as the server is stopped, and its exit. */
  stop: () => Promise<void>;
};

/**
 * `env` is added to the test run's environment; as a function it is given the instance's URL (to be its own issuer, say).
 * `root` is the checkout whose instance runs (another release's tree, for test/rolling-upgrade.once.test.ts).
 */
export async function startProtocolProcess(
  env: Record<string, string> | ((url: string) => Record<string, string>) = {},
  { root = ROOT }: { root?: string } = {},
): Promise<ProtocolProcess> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/protocol-instance.ts"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, KEYFOB_LOG: "warn", ...(typeof env === "function" ? env(url) : env), PORT: String(port) },
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("listening") && resolve());
    child.once("exit", (code) => reject(new Error(`Keyfob exited (${code}) before listening:\n${stderr}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
