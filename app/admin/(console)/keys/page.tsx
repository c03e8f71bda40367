/**
 * /admin/keys: the signing-key schedule. Upcoming keys are already published in the JWKS; the
 * current key signs; retired keys stay published until the tokens they signed have expired. Any
 * key can be revoked at once (a compromised key), after typing its kid: it leaves the JWKS and the
 * schedule. Revoked keys, and retired keys no longer published, stay listed below as history.
 */
import type { Metadata } from "next";
import { ConfirmAction } from "@/components/admin/confirm";
import { CopyableId } from "@/components/admin/id";
import { type Column, DataTable } from "@/components/admin/data-table";
import { Badge, Banner, button, Card, DateText, EmptyState, Mono, PageHeader } from "@/components/admin/ui";
import { keyHistory, keySchedule } from "@/lib/admin/operations";
import { SIGNING_ALG, SIGNING_ALGS, type KeyScheduleEntry } from "@/lib/keys/keystore";
import type { KeyHistoryRow } from "@/lib/store/contract";
import { JWKS_MAX_AGE_SECONDS } from "@/lib/http/metadata";
import { revokeKeyAction, rotateKeyAction } from "../../_lib/actions";
import { adminPage, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Signing keys" };

const tone = { current: "green", upcoming: "indigo", retired: "slate" } as const;

function duration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} day${seconds === 86400 ? "" : "s"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

/** A kid from the query, shown only if it looks like one (the page says what was done with it). */
const kidParam = (value: string | string[] | undefined) => {
  const kid = param(value);
  return /^[0-9A-Za-z_-]{1,100}$/.test(kid) ? kid : "";
};

type KeyRow = KeyScheduleEntry & { until?: Date };

/** The schedule's columns; revoking says how long verifiers may cache the JWKS and how early a key is published. */
const columns = (jwksCache: string, publishLead: string): Column<KeyRow>[] => [
  { header: "Key ID (kid)", className: "min-w-[12rem]", cell: (key) => <CopyableId value={key.kid} label={`kid ${key.kid}`} truncate /> },
  { header: "Alg", cell: (key) => <Mono>{key.alg}</Mono> },
  { header: "Status", cell: (key) => <Badge tone={tone[key.status]}>{key.status[0].toUpperCase() + key.status.slice(1)}</Badge> },
  { header: "Signs from", cell: (key) => <DateText date={key.activatesAt} /> },
  {
    header: "Signs until",
    cell: (key) => (key.until ? <DateText date={key.until} /> : <span className="text-slate-500">Until its successor</span>),
  },
  {
    header: "Actions",
    srOnly: true,
    cell: (key) => (
      // Aligned with flex, not text-align, which the dialog's text would inherit.
      <div className="flex justify-end">
        <ConfirmAction
          action={revokeKeyAction}
          fields={{ kid: key.kid }}
          trigger="Revoke now"
          triggerLabel={`Revoke key ${key.kid} now`}
          title={key.status === "current" ? "Revoke the current signing key now?" : `Revoke this ${key.status} key now?`}
          confirmLabel="Revoke key"
          pendingLabel="Revoking…"
          subject={key.kid}
          typeToConfirm={{ value: key.kid, label: "the key ID" }}
        >
          <p className="mb-2 font-medium text-slate-900">For a compromised key: this cannot be undone.</p>
          <ul className="list-disc space-y-1 pl-5">
            {key.status === "upcoming" ? (
              <>
                <li>It has signed no token. It leaves the JWKS at once and will never sign.</li>
                <li>The current key keeps signing; the schedule publishes a new successor when one is due.</li>
              </>
            ) : (
              <>
                <li>
                  Every token this key signed stops working at once: /userinfo and introspection refuse them on every instance, and the key
                  leaves the JWKS.
                </li>
                <li>
                  Resource servers that verify JWTs locally keep accepting those tokens until their JWKS cache expires (up to {jwksCache}).
                </li>
                {key.status === "current" ? (
                  <li>
                    Signing moves to a new key immediately, without the usual {publishLead} publish lead: resource servers that fetched the
                    JWKS before now may refuse the new key&apos;s tokens until their cache expires (up to {jwksCache}).
                  </li>
                ) : (
                  <li>The current key keeps signing.</li>
                )}
              </>
            )}
          </ul>
        </ConfirmAction>
      </div>
    ),
  },
];

const historyColumns: Column<KeyHistoryRow>[] = [
  { header: "Key ID (kid)", className: "min-w-[12rem]", cell: (key) => <CopyableId value={key.kid} label={`kid ${key.kid}`} truncate /> },
  { header: "Alg", cell: (key) => <Mono>{key.alg}</Mono> },
  { header: "Status", cell: (key) => (key.revokedAt ? <Badge tone="red">Revoked</Badge> : <Badge tone="slate">Retired</Badge>) },
  { header: "Signed from", cell: (key) => <DateText date={key.activatesAt} /> },
  {
    header: "Out of use since",
    cell: (key) => (
      <>
        <DateText date={key.revokedAt ?? key.unpublishedAt} />
        <span className="block text-xs text-slate-600">
          {key.revokedAt ? `Revoked${key.revokedBy ? ` by ${key.revokedBy}` : ""}` : "Unpublished: its tokens had all expired"}
        </span>
      </>
    ),
  },
];

export default async function KeysPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  const revoked = kidParam(query.revoked);
  const successor = kidParam(query.successor);
  const unchanged = kidParam(query.unchanged);
  const jwksCache = duration(JWKS_MAX_AGE_SECONDS);
  const [schedule, history] = await Promise.all([keySchedule(k, admin), keyHistory(k, admin)]);
  // Each set's keys by alg (RS256 first), newest first, each signing until the next of its set and alg.
  const rowsOf = (purpose: KeyScheduleEntry["purpose"]) =>
    SIGNING_ALGS.flatMap((alg) => {
      const keys = schedule
        .filter((key) => key.purpose === purpose && key.alg === alg)
        .sort((a, b) => a.activatesAt.getTime() - b.activatesAt.getTime());
      return keys.map((key, i) => ({ ...key, until: keys[i + 1]?.activatesAt })).reverse();
    });
  const rows = rowsOf("access");
  const vehicleRows = rowsOf("vehicle");
  const upcoming = rows.find((key) => key.status === "upcoming" && key.alg === SIGNING_ALG);
  // The algs with keys, each rotatable on its own while it has no upcoming key.
  const algsInUse = SIGNING_ALGS.filter((alg) => rows.some((key) => key.alg === alg));
  const rotatable = algsInUse.filter((alg) => !rows.some((key) => key.alg === alg && key.status === "upcoming"));
  const { keyRotationPeriod, keyPublishLead } = k.config;

  return (
    <>
      <PageHeader
        title="Signing keys"
        description={`Keys sign tokens for ${duration(keyRotationPeriod)} each, on a schedule per alg: RS256, and PS256 or ES256 once a client is set to it; a new key is published ${duration(keyPublishLead)} before it signs.`}
        actions={
          upcoming ? undefined : (
            <ConfirmAction
              action={rotateKeyAction}
              fields={{}}
              trigger="Rotate now"
              triggerClassName={button.primary}
              title="Rotate the signing key now?"
              confirmLabel="Rotate now"
              pendingLabel="Rotating…"
              tone="primary"
            >
              A new key of each alg in use (and one for vehicle tokens) is created and published in the JWKS at once. It starts signing in{" "}
              {duration(keyPublishLead)}, so every verifier&apos;s cache knows it first; the current key then retires and stays published
              until its tokens expire.
            </ConfirmAction>
          )
        }
      />
      {revoked && (
        <Banner tone="success">
          Key <Mono>{revoked}</Mono> was revoked: it is no longer published, never signs again, and every token it signed is refused.
          {successor && (
            <>
              {" "}
              New key <Mono>{successor}</Mono> signs from now.
            </>
          )}
        </Banner>
      )}
      {unchanged && (
        <Banner tone="info">
          Key <Mono>{unchanged}</Mono> was already revoked; nothing changed.
        </Banner>
      )}
      {upcoming && (
        <p role="note" className="mb-5 rounded-lg border border-sky-200 bg-sky-50 px-4 py-3 text-sm text-sky-950">
          A rotation is under way: key <Mono>{upcoming.kid}</Mono> signs from <DateText date={upcoming.activatesAt} />. Another rotation can
          start once it is current.
        </p>
      )}
      {algsInUse.length > 1 && rotatable.length > 0 && (
        <div className="mb-4 flex flex-wrap items-center gap-2">
          <span className="text-sm text-slate-700">Rotate one alg only:</span>
          {rotatable.map((alg) => (
            <ConfirmAction
              key={alg}
              action={rotateKeyAction}
              fields={{ alg }}
              trigger={`Rotate ${alg}`}
              triggerClassName={button.secondary}
              title={`Rotate the ${alg} key now?`}
              confirmLabel="Rotate now"
              pendingLabel="Rotating…"
              tone="primary"
            >
              A new {alg} key is created and published in the JWKS at once. It starts signing {alg} tokens in {duration(keyPublishLead)}.
              The other algs&apos; keys do not change.
            </ConfirmAction>
          ))}
        </div>
      )}
      <Card>
        <DataTable
          caption="Signing keys, newest first"
          columns={columns(jwksCache, duration(keyPublishLead))}
          rows={rows}
          rowKey={(key) => key.kid}
          empty={
            <EmptyState title="No signing keys yet">Keyfob creates its first key when it first signs or publishes its JWKS.</EmptyState>
          }
        />
      </Card>
      <div className="mt-6">
        <Card
          id="vehicle-keys"
          title="Vehicle token keys"
          description="A set of their own, on the same schedule, published at /keys/vehicle: they sign vehicle tokens (RFC 8693 token exchange) only, so a developer token never passes for a vehicle token nor the reverse. Revoked the same way."
        >
          <DataTable
            caption="Vehicle token keys, newest first"
            columns={columns(jwksCache, duration(keyPublishLead))}
            rows={vehicleRows}
            rowKey={(key) => key.kid}
            empty={
              <p className="text-sm text-slate-600">
                Keyfob creates the first one when it first issues a vehicle token or publishes /keys/vehicle.
              </p>
            }
          />
        </Card>
      </div>
      <div className="mt-6">
        <Card
          id="history"
          title="Key history"
          description="Keys out of use for good: revoked, or retired and unpublished once every token they signed had expired. Never published or used again."
        >
          <DataTable
            caption="Key history, newest first"
            columns={historyColumns}
            rows={history}
            rowKey={(key) => key.kid}
            empty={<p className="text-sm text-slate-600">No key has been revoked or unpublished yet.</p>}
          />
        </Card>
      </div>
    </>
  );
}
