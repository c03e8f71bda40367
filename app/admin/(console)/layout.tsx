/**
 * The dashboard's frame. The admin is checked here, before anything streams, so a signed-out
 * visitor gets a real redirect to /admin/login and a non-admin a real one to the 403 page; every
 * page checks again (client-side navigations do not re-render this layout). Its referrer policy
 * is the header's (proxy.ts, same-origin): a no-referrer one would make the browser send
 * `Origin: null` with the sign-out forms, which /admin/logout refuses as cross-site.
 */
import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AdminShell } from "@/components/admin/shell";
import { adminPage } from "../_lib/guard";

export const dynamic = "force-dynamic";
export const metadata: Metadata = {
  title: { template: "%s · Keyfob admin", default: "Keyfob admin" },
  robots: { index: false, follow: false },
};

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const { admin } = await adminPage();
  return <AdminShell who={admin.label}>{children}</AdminShell>;
}
