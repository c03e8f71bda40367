/**
 * Keyfob as processes of its own: scripts/start.ts, which `npm run serve` runs (with `--build`,
 * `npm start`), each on a free port, for the specs that start, stop and compare instances.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "../../scripts/free-port";

/**
 * `url` is the issuer (localhost); `api` reaches the same server over IPv4 only, so that every
 * request of a test comes from one caller address (localhost may be ::1 or 127.0.0.1 per connection).
 */
export type Instance = {
  name: string;
  url: string;
  api: string;
  process: ChildProcess;
  /** What it wrote to stdout and stderr, in order. */
  output: string[];
  /** What it wrote to stdout alone (the JSON log). */
  stdout: string[];
  exited: Promise<number | null>;
};

/** Starts scripts/start.ts with `args` in `cwd` (this checkout by default) on a free port. */
export async function startInstance(
  name: string,
  env: Record<string, string>,
  options: { cwd?: string; args?: string[] } = {},
): Promise<Instance> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { ...process.env, ISSUER_URL: url, PORT: String(port), NEXT_TELEMETRY_DISABLED: "1", KEYFOB_LOG: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const stdout: string[] = [];
  child.stdout!.on("data", (chunk) => {
    output.push(String(chunk));
    stdout.push(String(chunk));
  });
  child.stderr!.on("data", (chunk) => output.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { name, url, api: `http://127.0.0.1:${port}`, process: child, output, stdout, exited };
}

export async function ready(instance: Instance, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (instance.process.exitCode !== null)
      throw new Error(`${instance.name} exited with ${instance.process.exitCode}:\n${instance.output.join("")}`);
    const status = await fetch(`${instance.url}/healthz/ready`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${instance.name} was not ready within ${timeoutMs} ms:\n${instance.output.join("")}`);
}
