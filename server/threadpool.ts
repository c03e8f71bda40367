import { availableParallelism } from "node:os";

/**
 * Imported first by the launcher (scripts/start.ts), before anything uses libuv's threadpool,
 * which reads UV_THREADPOOL_SIZE once, when it starts. The pool signs every RS256 token; its
 * default of four threads on a machine with fewer cores runs four signatures against the event
 * loop and PostgreSQL for the same cores. Unless UV_THREADPOOL_SIZE is set, the pool gets as many
 * threads as the machine has cores, two to four (four is Node's default).
 */
process.env.UV_THREADPOOL_SIZE ??= String(Math.min(4, Math.max(2, availableParallelism())));
