/**
 * Keyfob's folder (the one with package.json, prisma/ and .next/), found from a module's own folder.
 * Run from source, a module sits in server/ or lib/db/; compiled for the image (scripts/bundle.ts),
 * every module is in dist/: a fixed number of `..` would be right for one of them only.
 */
import { existsSync } from "node:fs";
import path from "node:path";

export function projectRoot(moduleDir: string): string {
  for (let dir = moduleDir; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${moduleDir}`);
  }
}
