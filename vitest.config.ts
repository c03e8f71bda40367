import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Scenarios that prove a deployment rather than a runtime (the image's build, a rolling upgrade, a
 * backup's restore): `*.once.test.ts`. CI runs the suite on two Node.js versions and these on the
 * second only (the image's Node.js), setting KEYFOB_SKIP_ONCE=1 for the first; `npm test` runs them.
 */
const ONCE_ONLY = "test/**/*.once.test.ts";

export default defineConfig({
  // @keyfob/flow-a-client from its sources, as tsconfig.json's paths say (its dist/ is built only to pack it).
  resolve: {
    alias: {
      "@": path.resolve(import.meta.dirname),
      "@keyfob/flow-a-client": path.resolve(import.meta.dirname, "packages/flow-a-client/src/index.ts"),
    },
  },
  test: {
    include: ["lib/**/*.test.ts", "test/**/*.test.ts"],
    exclude: process.env.KEYFOB_SKIP_ONCE === "1" ? [...configDefaults.exclude, ONCE_ONLY] : configDefaults.exclude,
    globalSetup: ["test/support/global-setup.ts"],
    // next-auth imports "next/server" without an extension, which only a bundler resolves (Next's
    // package has no exports map): test/quickstart.test.ts runs the Auth.js example through Vite.
    server: { deps: { inline: ["next-auth"] } },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Integration tests share one PostgreSQL; two workers match the machine's two cores.
    maxWorkers: 2,
  },
});
