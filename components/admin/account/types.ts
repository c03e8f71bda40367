import type { getAccount } from "@/lib/admin/operations";

/** One account as the dashboard's account page shows it (lib/admin/operations getAccount). */
export type AdminAccount = NonNullable<Awaited<ReturnType<typeof getAccount>>>;
