import { spawn } from "node:child_process";

type CliResult = { code: number | null; stdout: string; stderr: string };

/** The admin CLI (scripts/keyfob.ts) as a separate process, on the suite's database. */
export const cli = (...args: string[]): Promise<CliResult> => run(args);

/** The same, on another database (or with other settings). */
export const cliOn =
  (databaseUrl: string, env: Record<string, string> = {}) =>
  (...args: string[]): Promise<CliResult> =>
    run(args, { DATABASE_URL: databaseUrl, ...env });

/** A hung command is a defect: it is killed after 45 s rather than left to the test's timeout. */
function run(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/keyfob.ts", ...args], {
      env: { ...process.env, ...env, KEYFOB_LOG: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Polls until `done` holds (every `everyMs`), for at most `ms`; returns how long it took. */
export async function within(ms: number, done: () => Promise<boolean>, everyMs = 5): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return performance.now() - started;
}
