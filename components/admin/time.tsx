"use client";
/**
 * A time in the viewer's own time zone: relative when it is within a day of now ("5 minutes ago",
 * "in 3 hours"), else the local date and time with the zone's name. UTC to the second on hover
 * (title) and in the markup (datetime). The server renders the UTC text, which the browser replaces
 * once it knows the zone; relative times refresh every minute.
 */
import { useEffect, useState } from "react";

const DAY = 86_400_000;

export function utcText(date: Date, withTime = true, seconds = false): string {
  const iso = date.toISOString();
  return withTime ? `${iso.slice(0, 10)} ${iso.slice(11, seconds ? 19 : 16)} UTC` : iso.slice(0, 10);
}

export function relativeText(date: Date, now: number): string | undefined {
  const diff = date.getTime() - now;
  const abs = Math.abs(diff);
  if (abs >= DAY) return undefined;
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  if (abs < 60_000) return format.format(Math.round(diff / 1000), "second");
  if (abs < 3_600_000) return format.format(Math.round(diff / 60_000), "minute");
  return format.format(Math.round(diff / 3_600_000), "hour");
}

export function localText(date: Date, withTime = true): string {
  return withTime
    ? date.toLocaleString(undefined, {
        year: "numeric",
        month: "short",
        day: "numeric",
        hour: "2-digit",
        minute: "2-digit",
        timeZoneName: "short",
      })
    : date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

export function LocalTime({ iso, withTime = true, relative = true }: { iso: string; withTime?: boolean; relative?: boolean }) {
  const [now, setNow] = useState<number | undefined>(undefined);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  const date = new Date(iso);
  const text = now === undefined ? utcText(date, withTime) : (relative && withTime && relativeText(date, now)) || localText(date, withTime);
  return (
    <time dateTime={iso} title={utcText(date, true, true)} className="whitespace-nowrap" data-local={now === undefined ? undefined : ""}>
      {text}
    </time>
  );
}
