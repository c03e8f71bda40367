/**
 * Starts Keyfob: gets the database ready (embedded PostgreSQL under ./.data when DATABASE_URL is
 * unset), applies pending migrations, then serves on PORT (server/serve.ts).
 *   npm start          build if the sources changed since the last build, then serve
 *   npm run serve      serve the existing build (e.g. several instances on one PostgreSQL)
 *   npm run dev        development server: Next.js reloads pages, and a change to the code the
 *                      protocol routes run restarts the process (tsx watch)
 */
import "../server/threadpool";
import "../server/no-source-maps";
import "./load-env";
import { prepareStorage } from "../lib/bootstrap";
import { printFirstAdminLink } from "../lib/admin/first-admin";
import { ConfigError, loadConfig } from "../lib/config";
import { log } from "../lib/log";
import { keyfob } from "../lib/runtime";
import { build, buildAnnouncement, buildNeeded, serveCurrentBuild } from "../server/build";
import { nextSteps } from "../server/next-steps";
import { serve, type RunningServer } from "../server/serve";

const mode = process.argv.includes("--dev") ? "dev" : process.argv.includes("--build") ? "build" : "serve";

async function main() {
  let server: RunningServer | undefined;
  let stop = async () => {};
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    try {
      await server?.close();
    } finally {
      await stop();
      process.exit(0);
    }
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));

  const prepared = await prepareStorage(loadConfig());
  const { config } = prepared;
  stop = prepared.stop;
  prepared.leaveSignalsToCaller(); // the embedded database is stopped by shutdown(), after the requests in flight
  // The handlers read their configuration from the environment, embedded database included.
  Object.assign(process.env, { DATABASE_URL: config.databaseUrl, KEYFOB_SECRET: config.secret, NEXT_TELEMETRY_DISABLED: "1" });

  if (mode === "build") {
    const reason = buildNeeded();
    if (reason) {
      console.error(buildAnnouncement(reason));
      const code = await build(process.env);
      if (code !== 0) {
        await stop();
        process.exit(code);
      }
    }
  }
  if (stopping) return;
  if (mode !== "dev") serveCurrentBuild();
  server = await serve(config, { dev: mode === "dev" });
  // For people, on stderr: stdout is the JSON log.
  console.error(`Keyfob: ${config.issuerUrl} (port ${server.port}, database ${config.databaseUrl.replace(/\/\/[^@]*@/, "//")})`);
  console.error(nextSteps(config.issuerUrl));
  await printFirstAdminLink(keyfob()).catch((error) => log.warn("no first-admin set-up link", { reason: String(error) }));
}

main().catch((error) => {
  console.error(
    error instanceof ConfigError ? error.message : `Keyfob failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
