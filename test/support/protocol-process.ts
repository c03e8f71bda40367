/**
 * Starts test/support/protocol-instance.ts in a process of its own on a free port (its own pool,
 * caches and event loop; the test run's database unless `env` says otherwise), for tests that need
 * a second real server rather than a second Keyfob in the test's process.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { freePort } from "../../scripts/free-port";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A running instance: where it listens (`url`), and how to stop it (SIGTERM, as the server is stopped). */
export type ProtocolProcess = { url: string; stop: () => Promise<void> };

export async function startProtocolProcess(env: Record<string, string> = {}): Promise<ProtocolProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/protocol-instance.ts"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PORT: String(port), KEYFOB_LOG: "warn", ...env },
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("listening") && resolve());
    child.once("exit", (code) => reject(new Error(`Keyfob exited (${code}) before listening:\n${stderr}`)));
  });
  return {
    url: `http://localhost:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
