/** One client as the dashboard's client page shows it (lib/admin/operations getClient). */
export type { AdminClient } from "@/lib/admin/operations";
