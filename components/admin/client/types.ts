import type { getClient } from "@/lib/admin/operations";

/** One client as the dashboard's client page shows it (lib/admin/operations getClient). */
export type AdminClient = NonNullable<Awaited<ReturnType<typeof getClient>>>;
