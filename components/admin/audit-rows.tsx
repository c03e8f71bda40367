"use client";
/**
 * The audit log's rows: the essentials on one line, ids cut to their ends (at phone width a card:
 * time and outcome, action, reason, who), and a Details button that opens a row below with every field of the event (its
 * reason in full, both times, links to what it names).
 */
import Link from "next/link";
import { Fragment, useState } from "react";
import type { AuditEventRow } from "@/lib/store/contract";
import { CopyableId } from "./id";
import { stackedTd } from "./data-table";
import { Badge, DateText, Mono } from "./ui";
import { utcText } from "./time";

/** An audit event as the page hands it to the browser: its id and time as text. */
export type AuditRowEvent = Omit<AuditEventRow, "id" | "at"> & { id: string; at: string };

/** What an outcome means, for the expanded row. */
const OUTCOMES: Record<string, string> = {
  success: "Done.",
  rejected: "An admin's change was refused: invalid input, or the change could not be made (the detail says why).",
  forbidden: "Refused: the account that tried is not an admin.",
  error: "An admin's change failed on the server.",
  invalid_request: "The request was malformed.",
  invalid_client: "The client is unknown or disabled, or failed to authenticate.",
  invalid_grant: "The code, refresh token, state or signature was refused.",
  invalid_scope: "A scope was not allowed.",
  unauthorized_client: "The client may not use this grant.",
  unsupported_grant_type: "Unknown grant_type.",
  access_denied: "Denied: the user cancelled, the account is blocked, or the client is no longer allowed.",
  invalid_token: "The access token was invalid, expired or revoked.",
  insufficient_scope: "The access token lacked the scope needed.",
  temporarily_unavailable: "Keyfob could not reach a dependency (database or chain) or a rate limit applied.",
  server_error: "Keyfob failed unexpectedly.",
};

const tone = (outcome: string) => (outcome === "success" ? "green" : outcome === "rejected" ? "amber" : "red");

/** Who an event names, e.g. "client 0x1234…abcd" with a copy button: the whole id on hover, copied, and in its details. */
function Party({ label, value, idLabel }: { label: string; value: string | null; idLabel: string }) {
  if (!value) return null;
  return (
    <div className="flex items-center gap-1 whitespace-nowrap">
      <dt className="text-xs leading-5 text-slate-500">{label}</dt>
      <dd>
        <CopyableId value={value} label={idLabel} short />
      </dd>
    </div>
  );
}

function Field({ name, children }: { name: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0 sm:grid sm:grid-cols-[9rem_1fr] sm:gap-3">
      <dt className="text-xs font-medium tracking-wide text-slate-500 uppercase sm:pt-0.5">{name}</dt>
      <dd className="min-w-0 text-sm text-slate-800">{children}</dd>
    </div>
  );
}

const none = <span className="text-slate-400">—</span>;

export function AuditRows({ events }: { events: AuditRowEvent[] }) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <>
      {events.map((event) => {
        const expanded = open.has(event.id);
        const detailsId = `audit-event-${event.id}`;
        return (
          <Fragment key={event.id}>
            <tr
              className={`max-sm:grid max-sm:grid-cols-[1fr_auto] max-sm:items-center max-sm:gap-x-3 max-sm:gap-y-1 max-sm:px-4 max-sm:py-3 ${expanded ? "bg-slate-50" : ""}`}
            >
              <td className={`${stackedTd} max-sm:col-start-1 max-sm:row-start-1 sm:whitespace-nowrap`}>
                <DateText date={event.at} />
              </td>
              <td className={`${stackedTd} max-sm:col-start-1 max-sm:row-start-2 max-sm:min-w-0 sm:whitespace-nowrap`}>
                <Mono>{event.action}</Mono>
              </td>
              <td className={`${stackedTd} max-sm:col-start-2 max-sm:row-start-1 max-sm:text-right`}>
                <Badge tone={tone(event.outcome)}>{event.outcome}</Badge>
              </td>
              <td className={`${stackedTd} max-sm:col-span-2 max-sm:row-start-4`}>
                <dl className="flex flex-wrap gap-x-3 gap-y-0.5 sm:flex-nowrap">
                  <Party label="by" value={event.actor} idLabel="actor" />
                  <Party label="client" value={event.clientId} idLabel="client ID" />
                  <Party label="account" value={event.accountId} idLabel="account" />
                </dl>
                {!event.actor && !event.clientId && !event.accountId && none}
              </td>
              {/* Wide, the detail takes the room the other cells leave (max-w-0 lets it shrink), on one line cut short; a phone's card shows two lines of it. */}
              <td
                className={`${stackedTd} hidden max-sm:col-span-2 max-sm:row-start-3 max-sm:block lg:table-cell lg:w-full lg:max-w-0 lg:min-w-[8rem]`}
                title={event.detail ?? undefined}
              >
                {event.detail ? <Mono className="line-clamp-2 lg:block lg:truncate">{event.detail}</Mono> : none}
              </td>
              <td className={`${stackedTd} hidden whitespace-nowrap 2xl:table-cell`}>{event.ip ? <Mono>{event.ip}</Mono> : none}</td>
              <td className={`${stackedTd} text-right max-sm:col-start-2 max-sm:row-start-2`}>
                <button
                  type="button"
                  aria-expanded={expanded}
                  aria-controls={detailsId}
                  onClick={() => toggle(event.id)}
                  className="inline-flex min-h-8 items-center gap-1 rounded-md px-2 text-xs font-medium whitespace-nowrap text-indigo-700 hover:bg-indigo-50 focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:outline-none"
                >
                  Details<span className="sr-only"> of event {event.id}</span>
                  <svg
                    className={`size-3.5 transition ${expanded ? "rotate-180" : ""}`}
                    viewBox="0 0 20 20"
                    fill="currentColor"
                    aria-hidden="true"
                  >
                    <path d="M5.2 7.2a.75.75 0 0 1 1.06 0L10 10.94l3.74-3.74a.75.75 0 1 1 1.06 1.06l-4.27 4.27a.75.75 0 0 1-1.06 0L5.2 8.26a.75.75 0 0 1 0-1.06Z" />
                  </svg>
                </button>
              </td>
            </tr>
            <tr id={detailsId} hidden={!expanded} className="bg-slate-50 max-sm:block">
              <td colSpan={7} className="px-4 pt-1 pb-4 max-sm:block sm:pl-0">
                <dl className="grid gap-2 rounded-lg bg-white p-3 ring-1 ring-slate-200 sm:p-4" aria-label={`Event ${event.id}`}>
                  <Field name="Event">
                    <Mono>#{event.id}</Mono>
                  </Field>
                  <Field name="Time">
                    <DateText date={event.at} relative={false} />{" "}
                    <span className="text-slate-500">· {utcText(new Date(event.at), true, true)}</span>
                  </Field>
                  <Field name="Action">
                    <Mono>{event.action}</Mono>
                  </Field>
                  <Field name="Outcome">
                    <Badge tone={tone(event.outcome)}>{event.outcome}</Badge>{" "}
                    <span className="text-slate-600">{OUTCOMES[event.outcome] ?? ""}</span>
                  </Field>
                  <Field name="Reason / detail">{event.detail ? <Mono className="whitespace-pre-wrap">{event.detail}</Mono> : none}</Field>
                  <Field name="Actor">
                    {event.actor ? (
                      <CopyableId value={event.actor} label="actor" />
                    ) : (
                      <span className="text-slate-500">none (a protocol event)</span>
                    )}
                  </Field>
                  <Field name="Client">
                    {event.clientId ? (
                      <span className="flex flex-wrap items-center gap-x-3 gap-y-1">
                        <CopyableId value={event.clientId} label="client ID" />
                        <Link className="text-indigo-700 hover:underline" href={`/admin/clients/${encodeURIComponent(event.clientId)}`}>
                          Open client
                        </Link>
                        <Link
                          className="text-indigo-700 hover:underline"
                          href={`/admin/audit?${new URLSearchParams({ client: event.clientId })}`}
                        >
                          Its events
                        </Link>
                      </span>
                    ) : (
                      none
                    )}
                  </Field>
                  <Field name="Account">
                    {event.accountId ? (
                      <span className="flex flex-wrap items-center gap-x-3 gap-y-1">
                        <CopyableId value={event.accountId} label="account" />
                        {/^0x[0-9a-fA-F]{40}$/.test(event.accountId) && (
                          <>
                            <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${event.accountId}`}>
                              Open account
                            </Link>
                            <Link
                              className="text-indigo-700 hover:underline"
                              href={`/admin/audit?${new URLSearchParams({ account: event.accountId })}`}
                            >
                              Its events
                            </Link>
                          </>
                        )}
                      </span>
                    ) : (
                      none
                    )}
                  </Field>
                  <Field name="Caller address">{event.ip ? <Mono>{event.ip}</Mono> : none}</Field>
                </dl>
              </td>
            </tr>
          </Fragment>
        );
      })}
    </>
  );
}
