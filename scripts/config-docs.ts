/** Writes the README's configuration tables and .env.example from the settings table in lib/config.ts. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { envExample, withReadmeTables } from "../lib/config-docs";

const root = path.join(import.meta.dirname, "..");
const readme = path.join(root, "README.md");
writeFileSync(readme, withReadmeTables(readFileSync(readme, "utf8")));
writeFileSync(path.join(root, ".env.example"), envExample());
console.log("wrote README.md (configuration tables) and .env.example");
