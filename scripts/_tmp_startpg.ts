import { startEmbeddedPostgres } from "/work/main/lib/db/embedded.ts";
const db = await startEmbeddedPostgres("/tmp/kf-dev", 54399);
console.log(db.url);
