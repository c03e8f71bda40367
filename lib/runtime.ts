import { loadConfig } from "./config";
import { scheduleSweeps } from "./housekeeping";
import { createKeyfob, type Keyfob } from "./keyfob";

const holder = globalThis as { keyfob?: Keyfob };

/** The process-wide Keyfob, built from the environment on first use (kept across dev reloads). */
export function keyfob(): Keyfob {
  if (!holder.keyfob) {
    holder.keyfob = createKeyfob(loadConfig());
    scheduleSweeps(holder.keyfob.db);
  }
  return holder.keyfob;
}
