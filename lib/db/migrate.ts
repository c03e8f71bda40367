import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const projectRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

/**
 * Applies prisma/migrations with `prisma migrate deploy`. Prisma takes an advisory lock, so
 * several instances starting together on one PostgreSQL apply each migration once.
 */
export function migrateDatabase(url: string): Promise<void> {
  const cli = require.resolve("prisma/build/index.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "migrate", "deploy"], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`prisma migrate deploy failed (exit ${code}):\n${output.replace(url, "<DATABASE_URL>")}`)),
    );
  });
}
