import { loadConfig } from "./config";
import { createKeyfob, type Keyfob } from "./keyfob";

const holder = globalThis as { keyfob?: Keyfob };

/** The process-wide Keyfob, built from the environment on first use (kept across dev reloads). */
export function keyfob(): Keyfob {
  holder.keyfob ??= createKeyfob(loadConfig());
  return holder.keyfob;
}
