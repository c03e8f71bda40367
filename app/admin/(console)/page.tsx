/** /admin: counts, and token issuances and failures per day over the last 14 days (each linking to the audit log). */
import type { Metadata } from "next";
import Link from "next/link";
import { TokenActivityChart } from "@/components/admin/chart";
import { Card, focusRing, PageHeader } from "@/components/admin/ui";
import { overview } from "@/lib/admin/operations";
import { adminPage } from "../_lib/guard";

export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage() {
  const { k, admin } = await adminPage();
  const data = await overview(k, admin);
  const issued = data.perDay.reduce((sum, day) => sum + day.issued, 0);
  const failed = data.perDay.reduce((sum, day) => sum + day.failed, 0);
  const range = { from: data.perDay[0].day, to: data.perDay[data.perDay.length - 1].day };
  const audit = (action: string) => `/admin/audit?${new URLSearchParams({ action, ...range })}`;
  const stats = [
    { label: "Clients", value: data.clients, href: "/admin/clients" },
    { label: "Accounts", value: data.accounts, href: "/admin/accounts" },
    { label: "Active tokens", value: data.activeTokens, href: "/admin/tokens" },
  ];
  return (
    <>
      <PageHeader title="Overview" description="Keyfob at a glance." />
      <dl className="grid gap-4 sm:grid-cols-3">
        {stats.map((stat) => (
          <div
            key={stat.label}
            className="relative rounded-xl bg-white p-5 shadow-xs ring-1 ring-slate-200 transition focus-within:ring-indigo-400 hover:ring-indigo-300"
          >
            <dt className="text-sm font-medium text-slate-600">
              <Link href={stat.href} className={`rounded-sm after:absolute after:inset-0 ${focusRing}`}>
                {stat.label}
              </Link>
            </dt>
            <dd className="mt-1 text-3xl font-semibold tracking-tight text-slate-900 tabular-nums">{stat.value.toLocaleString("en")}</dd>
          </div>
        ))}
      </dl>
      <div className="mt-6">
        <Card
          id="activity"
          title="Token requests, last 14 days"
          description={
            <>
              <Link className="text-indigo-700 underline underline-offset-2" href={audit("token.issued")}>
                {issued.toLocaleString("en")} issued
              </Link>{" "}
              ·{" "}
              <Link className="text-indigo-700 underline underline-offset-2" href={audit("token.failed")}>
                {failed.toLocaleString("en")} failed
              </Link>{" "}
              (UTC days)
            </>
          }
        >
          <TokenActivityChart data={data.perDay} />
        </Card>
      </div>
    </>
  );
}
