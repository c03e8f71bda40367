/** `npm run build`: builds into a new folder and makes it the build that instances starting from now on serve (server/build.ts). */
import { build } from "../server/build";

process.exit(await build(process.env));
