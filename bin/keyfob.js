#!/usr/bin/env node
// `npx keyfob …` in this folder: the admin CLI (scripts/keyfob.ts) run by Node itself, without npm,
// so nothing but the command's own output reaches stdout. tsx loads the TypeScript sources.
import { register } from "tsx/esm/api";

register();
await import("../scripts/keyfob.ts");
