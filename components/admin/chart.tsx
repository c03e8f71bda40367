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

/**
 * A bar and its link. The link is the bar's whole half of the day's column, full height, at least
 * 24 px wide (WCAG 2.5.8's minimum target size), with the coloured bar drawn inside it: a day with
 * a count of 1 is as easy to hit as the busiest one. The two bars of a day sit side by side.
 */
function Bar({
  count,
  max,
  day,
  action,
  what,
  colour,
  side,
}: {
  count: number;
  max: number;
  day: string;
  action: string;
  what: string;
  colour: string;
  side: "left" | "right";
}) {
  const height = count === 0 ? 0 : Math.max(2, (count / max) * 100);
  const text = `${label(day)}: ${count.toLocaleString("en")} ${what}`;
  if (count === 0) return <span className="h-full min-w-6 flex-1" aria-hidden="true" />;
  return (
    <Link
      href={auditHref(action, day)}
      title={`${text} (show in the audit log)`}
      className={`group flex h-full min-w-6 flex-1 items-end rounded-sm ${side === "left" ? "justify-end" : "justify-start"} ${focusRing}`}
    >
      <span
        aria-hidden="true"
        style={{ height: `${height}%` }}
        className={`w-full max-w-5 rounded-t-sm ${colour} transition group-hover:opacity-80`}
      />
      <span className="sr-only">{text}</span>
    </Link>
  );
}

/** A day's column: its two bars (or its label below them), never narrower than two targets. */
const column = "min-w-[3.125rem] flex-1";

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
        {/*
          Where the days do not fit (a phone), the plot scrolls sideways in its own box. The box is
          right-to-left so that it opens on its right end, today; its content is left-to-right.
          Keyboard users scroll it by moving through its links; with no bar at all it takes focus
          itself.
        */}
        <div
          className={`min-w-0 flex-1 overflow-x-auto [direction:rtl] ${highest === 0 ? `rounded-sm ${focusRing}` : ""}`}
          {...(highest === 0 && { tabIndex: 0, role: "region", "aria-label": "Token requests per day (no requests)" })}
        >
          <div className="w-max min-w-full [direction:ltr]">
            <ol
              className="relative flex h-48 items-end gap-0.5 border-b border-slate-300 sm:h-60 sm:gap-1.5"
              aria-label={`Token requests per day over the last ${data.length} days`}
            >
              <span aria-hidden="true" className="pointer-events-none absolute inset-x-0 top-0 border-t border-dashed border-slate-200" />
              <span aria-hidden="true" className="pointer-events-none absolute inset-x-0 top-1/2 border-t border-dashed border-slate-200" />
              {data.map((point) => (
                <li key={point.day} className={`relative flex h-full items-end gap-0.5 ${column}`}>
                  <Bar
                    count={point.issued}
                    max={max}
                    day={point.day}
                    action="token.issued"
                    what="issued"
                    colour="bg-indigo-600"
                    side="left"
                  />
                  <Bar
                    count={point.failed}
                    max={max}
                    day={point.day}
                    action="token.failed"
                    what="failed"
                    colour="bg-red-500"
                    side="right"
                  />
                  {point.issued + point.failed === 0 && <span className="sr-only">{label(point.day)}: none</span>}
                </li>
              ))}
            </ol>
            <div className="mt-1 flex gap-0.5 sm:gap-1.5" aria-hidden="true">
              {data.map((point) => (
                <span key={point.day} className={`truncate text-center text-[11px] whitespace-nowrap text-slate-500 ${column}`}>
                  {label(point.day)}
                </span>
              ))}
            </div>
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
