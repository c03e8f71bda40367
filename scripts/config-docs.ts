/** Writes docs/configuration.md's tables and .env.example from the settings table in lib/config.ts. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { envExample, withConfigTables } from "../lib/config-docs";

const root = path.join(import.meta.dirname, "..");
const page = path.join(root, "docs", "configuration.md");
writeFileSync(page, withConfigTables(readFileSync(page, "utf8")));
writeFileSync(path.join(root, ".env.example"), envExample());
console.log("wrote docs/configuration.md (the tables) and .env.example");
