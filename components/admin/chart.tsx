"use client";
/** Token issuances and failures per day (recharts), with the same numbers in a table for screen readers. */
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export type DayCount = { day: string; issued: number; failed: number };

export function TokenActivityChart({ data }: { data: DayCount[] }) {
  const label = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString("en", { month: "short", day: "numeric", timeZone: "UTC" });
  return (
    <figure>
      <div className="h-64 w-full sm:h-72" aria-hidden="true" data-testid="token-chart">
        <ResponsiveContainer width="100%" height="100%">
          <BarChart accessibilityLayer={false} data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
            <XAxis dataKey="day" tickFormatter={label} tick={{ fontSize: 12, fill: "#64748b" }} tickLine={false} axisLine={{ stroke: "#cbd5e1" }} minTickGap={12} />
            <YAxis allowDecimals={false} tick={{ fontSize: 12, fill: "#64748b" }} tickLine={false} axisLine={false} />
            <Tooltip labelFormatter={(day) => label(String(day))} cursor={{ fill: "#f1f5f9" }} />
            <Legend wrapperStyle={{ fontSize: 13 }} />
            <Bar dataKey="issued" name="Issued" fill="#4f46e5" radius={[3, 3, 0, 0]} />
            <Bar dataKey="failed" name="Failed" fill="#ef4444" radius={[3, 3, 0, 0]} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="sr-only">Token requests per day over the last {data.length} days</figcaption>
      <table className="sr-only">
        <thead>
          <tr>
            <th>Day</th>
            <th>Issued</th>
            <th>Failed</th>
          </tr>
        </thead>
        <tbody>
          {data.map((point) => (
            <tr key={point.day}>
              <td>{point.day}</td>
              <td>{point.issued}</td>
              <td>{point.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
