/**
 * A process that logs through lib/log.ts every millisecond, for test/log.test.ts. With
 * `--uncaught-handler` it logs uncaught exceptions, as the handler Next.js installs in the server
 * does. On SIGTERM it exits with the number of uncaught exceptions it saw (0: none). It says
 * "ready" once, before its parent closes the pipes.
 */
import { log } from "../../lib/log";

let uncaught = 0;
if (process.argv.includes("--uncaught-handler")) {
  process.on("uncaughtException", (error) => {
    uncaught += 1;
    log.error("uncaught exception", { error: String(error) });
  });
}
process.on("SIGTERM", () => process.exit(Math.min(uncaught, 100)));
setInterval(() => log.info("tick"), 1);
setInterval(() => log.error("tock"), 1);
process.stdout.write("ready\n");
