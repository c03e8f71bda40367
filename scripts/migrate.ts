/**
 * `npm run db:migrate`: applies pending migrations with Keyfob's runner (lib/db/migrate.ts), on the
 * direct connection when there is one, as every instance does at start-up; without DATABASE_URL, on
 * the embedded PostgreSQL. Prisma's own `migrate deploy` cannot run Keyfob's migrations: its
 * runner splits scripts at every semicolon, function bodies included.
 */
import "./load-env";
import { prepareStorage } from "../lib/bootstrap";
import { loadConfig } from "../lib/config";

const { stop } = await prepareStorage(loadConfig());
await stop();
console.log("the database schema is up to date");
