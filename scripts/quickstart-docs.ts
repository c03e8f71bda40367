/** Writes the Flow B quickstart's code (docs/quickstart.md, examples/nextjs-authjs/auth.ts) from the Integration panel's snippets (lib/admin/quickstart.ts). */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AUTHJS_EXAMPLE_FILE, embedSnippets, quickstartSnippets } from "../lib/admin/quickstart";

const root = path.join(import.meta.dirname, "..");
const page = path.join(root, "docs", "quickstart.md");
writeFileSync(page, embedSnippets(readFileSync(page, "utf8")));
writeFileSync(path.join(root, AUTHJS_EXAMPLE_FILE), `${quickstartSnippets().authjs}\n`);
console.log(`wrote docs/quickstart.md (its snippets) and ${AUTHJS_EXAMPLE_FILE}`);
