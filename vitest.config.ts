import path from "node:path";
import { defineConfig } from "vitest/config";

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
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Integration tests share one PostgreSQL; two workers match the machine's two cores.
    maxWorkers: 2,
  },
});
