/** Every /admin page (the dashboard, sign-out and sign-in failure pages): the theme that follows the system's light or dark mode. */
import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./admin-theme.css";

// The template applies to every /admin page, the overview too (a layout's own template skips the page beside it).
export const metadata: Metadata = { title: { template: "%s · Keyfob admin", default: "Keyfob admin" } };

export default function AdminLayout({ children }: { children: ReactNode }) {
  return <div className="admin-theme min-h-dvh bg-slate-50 text-slate-900">{children}</div>;
}
