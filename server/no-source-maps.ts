/**
 * Imported first by the launcher (scripts/start.ts). tsx turns Node's source maps on, and Node then
 * keeps the map of every module it loads, Next.js's server chunks included: about 90 MB of heap and
 * RSS on a served instance, and part of its start-up (bench/README.md). A served process logs no
 * stack traces of its own, so it runs without them; `npm run dev`, and `--enable-source-maps`
 * (or in NODE_OPTIONS), keep them.
 */
const asked = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].includes("--enable-source-maps");
if (!asked && !process.argv.includes("--dev")) process.setSourceMapsEnabled(false);
