import { loadConfig } from "./config";
import { scheduleSweeps } from "./housekeeping";
import { createKeyfob, type Keyfob } from "./keyfob";

/**
 * Process-wide state on globalThis: Next.js can load lib/ more than once (route bundles, the
 * launcher, dev reloads), and every copy must see one Keyfob and one shutdown flag.
 */
const holder = globalThis as { keyfob?: Keyfob; keyfobDraining?: boolean };

/** The process-wide Keyfob, built from the environment on first use. */
export function keyfob(): Keyfob {
  if (!holder.keyfob) {
    holder.keyfob = createKeyfob(loadConfig());
    scheduleSweeps(holder.keyfob, holder.keyfob.config);
    if (holder.keyfob.config.backchannelLogoutDelivery) holder.keyfob.logouts.start();
    holder.keyfob.vehicleEvents?.start();
  }
  return holder.keyfob;
}

/** Marks the process as shutting down: readiness fails from now on, so load balancers stop sending. */
export function beginDraining(): void {
  holder.keyfobDraining = true;
}

export function isDraining(): boolean {
  return holder.keyfobDraining === true;
}

/** Closes the process-wide Keyfob, if one was built (buffered audit events, workers, pool). */
export async function closeKeyfob(): Promise<void> {
  const built = holder.keyfob;
  holder.keyfob = undefined;
  await built?.close();
}
