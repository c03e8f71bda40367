/**
 * Starts Keyfob: gets the database ready (embedded PostgreSQL under ./.data when DATABASE_URL is
 * unset), applies migrations, then runs the Next.js server on PORT.
 *   npm start          build, then serve
 *   npm run serve      serve the existing build (e.g. several instances on one PostgreSQL)
 *   npm run dev        development server with reloading
 */
import "./load-env";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { ConfigError, loadConfig } from "../lib/config";
import { prepareStorage } from "../lib/bootstrap";

const mode = process.argv.includes("--dev") ? "dev" : process.argv.includes("--build") ? "build" : "serve";
const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");

function run(args: string[], env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, [nextBin, ...args], { stdio: "inherit", env: { ...env, NEXT_TELEMETRY_DISABLED: "1" } });
}

async function main() {
  const { config, stop } = await prepareStorage(loadConfig());
  const env = { ...process.env, DATABASE_URL: config.databaseUrl, KEYFOB_SECRET: config.secret };

  if (mode === "build") {
    const code = await new Promise<number>((resolve) => run(["build"], env).on("exit", (c) => resolve(c ?? 1)));
    if (code !== 0) {
      await stop();
      process.exit(code);
    }
  }
  const server = run([mode === "dev" ? "dev" : "start", "--port", String(config.port)], env);
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    server.kill("SIGTERM");
    await stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  server.on("exit", (code) => void shutdown(code ?? 0));
  console.log(`Keyfob: ${config.issuerUrl} (port ${config.port}, database ${config.databaseUrl.replace(/\/\/[^@]*@/, "//")})`);
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : `Keyfob failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
