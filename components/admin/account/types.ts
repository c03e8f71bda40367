/** One account as the dashboard's account page shows it (lib/admin/operations getAccount). */
export type { AdminAccount } from "@/lib/admin/operations";
