/**
 * /admin/keys: the signing-key schedule. Upcoming keys are already published in the JWKS; the
 * current key signs; retired keys stay published until the tokens they signed have expired.
 */
import type { Metadata } from "next";
import { ConfirmAction } from "@/components/admin/confirm";
import { Badge, button, Card, DateText, EmptyState, Mono, PageHeader, Table, td, th } from "@/components/admin/ui";
import { keySchedule } from "@/lib/admin/operations";
import { rotateKeyAction } from "../../_lib/actions";
import { adminPage } from "../../_lib/guard";

export const metadata: Metadata = { title: "Signing keys" };

const tone = { current: "green", upcoming: "indigo", retired: "slate" } as const;

function duration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} day${seconds === 86400 ? "" : "s"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

export default async function KeysPage() {
  const { k, admin } = await adminPage();
  const keys = [...(await keySchedule(k, admin))].sort((a, b) => a.activatesAt.getTime() - b.activatesAt.getTime());
  const upcoming = keys.find((key) => key.status === "upcoming");
  const { keyRotationPeriod, keyPublishLead } = k.config;
  const rows = keys.map((key, i) => ({ ...key, until: keys[i + 1]?.activatesAt })).reverse();

  return (
    <>
      <PageHeader
        title="Signing keys"
        description={`RS256 keys sign tokens for ${duration(keyRotationPeriod)} each; a new key is published ${duration(keyPublishLead)} before it signs.`}
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
              A new key is created and published in the JWKS at once. It starts signing in {duration(keyPublishLead)}, so every verifier&apos;s
              cache knows it first; the current key then retires and stays published until its tokens expire.
            </ConfirmAction>
          )
        }
      />
      {upcoming && (
        <p role="note" className="mb-5 rounded-lg border border-sky-200 bg-sky-50 px-4 py-3 text-sm text-sky-950">
          A rotation is under way: key <Mono>{upcoming.kid}</Mono> signs from <DateText date={upcoming.activatesAt} />. Another rotation can start
          once it is current.
        </p>
      )}
      <Card>
        {rows.length === 0 ? (
          <EmptyState title="No signing keys yet">Keyfob creates its first key when it first signs or publishes its JWKS.</EmptyState>
        ) : (
          <Table
            caption="Signing keys, newest first"
            head={
              <tr>
                <th className={th}>Key ID (kid)</th>
                <th className={th}>Status</th>
                <th className={th}>Signs from</th>
                <th className={th}>Signs until</th>
              </tr>
            }
          >
            {rows.map((key) => (
              <tr key={key.kid}>
                <td className={td}>
                  <Mono>{key.kid}</Mono>
                </td>
                <td className={td}>
                  <Badge tone={tone[key.status]}>{key.status[0].toUpperCase() + key.status.slice(1)}</Badge>
                </td>
                <td className={td}>
                  <DateText date={key.activatesAt} />
                </td>
                <td className={td}>{key.until ? <DateText date={key.until} /> : <span className="text-slate-500">Until its successor</span>}</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </>
  );
}
