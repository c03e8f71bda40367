import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envExample, withConfigTables } from "../lib/config-docs";

const root = path.join(import.meta.dirname, "..");
const read = (name: string) => readFileSync(path.join(root, name), "utf8");

describe("the configuration's documentation", () => {
  it("docs/configuration.md's tables are those of lib/config.ts", () => {
    const page = read("docs/configuration.md");
    expect(page, "docs/configuration.md differs from lib/config.ts: run npm run docs:config").toBe(withConfigTables(page));
  });

  it(".env.example is that of lib/config.ts", () => {
    expect(read(".env.example"), ".env.example differs from lib/config.ts: run npm run docs:config").toBe(envExample());
  });
});
