/**
 * Token issuances and failures per UTC day: bars drawn with plain HTML and CSS (no charting
 * library, no JavaScript), each bar a link to the audit log filtered to its action and day.
 * The list structure and the links' text make it readable without seeing it.
 */
import Link from "next/link";
import { focusRing } from "./ui";

export type DayCount = { day: string; issued: number; failed: number };

const label = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString("en", { month: "short", day: "numeric", timeZone: "UTC" });
const auditHref = (action: string, day: string) => `/admin/audit?${new URLSearchParams({ action, from: day, to: day })}`;

function Bar({ count, max, day, action, what, colour }: { count: number; max: number; day: string; action: string; what: string; colour: string }) {
  const height = count === 0 ? 0 : Math.max(2, (count / max) * 100);
  const text = `${label(day)}: ${count.toLocaleString("en")} ${what}`;
  if (count === 0) return <span className="w-1/2 max-w-5" aria-hidden="true" />;
  return (
    <Link
      href={auditHref(action, day)}
      title={`${text} (show in the audit log)`}
      style={{ height: `${height}%` }}
      className={`w-1/2 max-w-5 rounded-t-sm ${colour} transition hover:opacity-80 ${focusRing}`}
    >
      <span className="sr-only">{text}</span>
    </Link>
  );
}

export function TokenActivityChart({ data }: { data: DayCount[] }) {
  // The scale's top: an even number, so that the middle gridline is a whole count.
  const highest = Math.max(0, ...data.flatMap((d) => [d.issued, d.failed]));
  const max = highest <= 1 ? 2 : Math.ceil(highest / 2) * 2;
  return (
    <figure data-testid="token-chart">
      <div className="flex items-start gap-2">
        <div className="flex h-48 flex-col justify-between pb-px text-right text-xs text-slate-500 tabular-nums sm:h-60" aria-hidden="true">
          <span>{max.toLocaleString("en")}</span>
          <span>{(max / 2).toLocaleString("en")}</span>
          <span>0</span>
        </div>
        <div className="min-w-0 flex-1">
          <ol className="relative flex h-48 items-end gap-0.5 border-b border-slate-300 sm:h-60 sm:gap-1.5" aria-label={`Token requests per day over the last ${data.length} days`}>
            <span aria-hidden="true" className="pointer-events-none absolute inset-x-0 top-0 border-t border-dashed border-slate-200" />
            <span aria-hidden="true" className="pointer-events-none absolute inset-x-0 top-1/2 border-t border-dashed border-slate-200" />
            {data.map((point) => (
              <li key={point.day} className="relative flex h-full min-w-0 flex-1 items-end justify-center gap-px sm:gap-0.5">
                <Bar count={point.issued} max={max} day={point.day} action="token.issued" what="issued" colour="bg-indigo-600" />
                <Bar count={point.failed} max={max} day={point.day} action="token.failed" what="failed" colour="bg-red-500" />
                {point.issued + point.failed === 0 && <span className="sr-only">{label(point.day)}: none</span>}
              </li>
            ))}
          </ol>
          <div className="mt-1 flex gap-0.5 sm:gap-1.5" aria-hidden="true">
            {data.map((point, i) => (
              <span key={point.day} className={`min-w-0 flex-1 text-center text-[11px] whitespace-nowrap text-slate-500 ${i % 2 === (data.length - 1) % 2 ? "" : "max-sm:invisible"}`}>
                <span className="sm:hidden">{Number(point.day.slice(8))}</span>
                <span className="block truncate max-sm:hidden">{label(point.day)}</span>
              </span>
            ))}
          </div>
        </div>
      </div>
      <figcaption className="mt-3 flex flex-wrap items-center gap-x-4 gap-y-1 text-sm text-slate-600">
        <span className="inline-flex items-center gap-1.5">
          <span className="size-3 rounded-sm bg-indigo-600" aria-hidden="true" /> Issued
        </span>
        <span className="inline-flex items-center gap-1.5">
          <span className="size-3 rounded-sm bg-red-500" aria-hidden="true" /> Failed
        </span>
        <span className="text-slate-500">Select a bar to see its events in the audit log.</span>
      </figcaption>
    </figure>
  );
}
