/**
 * The client page's signers: keys that may sign Flow A challenges for its license, each revocable,
 * with a form to add one. Only a license (a client whose id is an address) has signers; for any
 * other client the card says what a signer needs instead of offering one.
 */
import { addSignerAction, revokeSignerAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { actionsColumn, type Column, DataTable } from "@/components/admin/data-table";
import { ActionForm, Field, SubmitButton } from "@/components/admin/form";
import { CopyableId } from "@/components/admin/id";
import { isLicense } from "@/lib/clients/client-id";
import { Badge, button, Card, DateText } from "@/components/admin/ui";
import type { AdminClient } from "./types";

type Signer = AdminClient["signers"][number];

function signerStatus(signer: { expiresAt: Date | null; revokedAt: Date | null }, now: Date) {
  if (signer.revokedAt) return <Badge tone="slate">Revoked</Badge>;
  if (signer.expiresAt && signer.expiresAt <= now) return <Badge tone="amber">Expired</Badge>;
  return <Badge tone="green">Active</Badge>;
}

const columns = (client: AdminClient, now: Date): Column<Signer>[] => [
  { header: "Address", cell: (signer) => <CopyableId value={signer.address} label={`signer ${signer.address}`} truncate /> },
  { header: "Status", cell: (signer) => signerStatus(signer, now) },
  { header: "Enabled", hideBelow: "md", cell: (signer) => <DateText date={signer.enabledAt} /> },
  {
    header: "Expires",
    cell: (signer) => (signer.expiresAt ? <DateText date={signer.expiresAt} /> : <span className="text-slate-500">Never</span>),
  },
  { header: "Revoked", hideBelow: "md", cell: (signer) => <DateText date={signer.revokedAt} /> },
  actionsColumn(
    (signer) =>
      !signer.revokedAt && (
        <ConfirmAction
          action={revokeSignerAction}
          fields={{ clientId: client.id, address: signer.address }}
          trigger="Revoke"
          triggerLabel={`Revoke signer ${signer.address}`}
          title="Revoke this signer?"
          confirmLabel="Revoke signer"
          pendingLabel="Revoking…"
          subject={signer.address}
        >
          Its next token request for {client.name} is refused. Adding it again later enables it anew.
        </ConfirmAction>
      ),
  ),
];

export function Signers({ client }: { client: AdminClient }) {
  const now = new Date();
  const activeSigners = client.signers.filter((s) => !s.revokedAt && (!s.expiresAt || s.expiresAt > now)).length;
  const license = isLicense(client.id);
  const table = (
    <DataTable
      caption="Signers of this client"
      columns={columns(client, now)}
      rows={client.signers}
      rowKey={(signer) => signer.address}
      empty={<p className="text-sm text-slate-600">No signers. The license address itself can always sign for itself.</p>}
    />
  );
  if (!license) {
    return (
      <Card id="signers" title="Signers" description="Keys that sign Flow A challenges on behalf of a developer license.">
        <p className="text-sm text-slate-700">
          This client cannot have signers: its ID is not a license address. Flow A asks a signer to sign for the address that is the client
          ID, so signers belong to clients created with a license address (0x…) as their ID. Here each wallet signs Flow A challenges for
          itself.
        </p>
        {/* Signers added before this rule: still listed, so they can be revoked. */}
        {client.signers.length > 0 && <div className="mt-4">{table}</div>}
      </Card>
    );
  }
  return (
    <Card
      id="signers"
      title="Signers"
      description={
        <>Keys that may sign Flow A challenges for this license ({activeSigners} active). Revocation applies to the next token request.</>
      }
    >
      <div className="mb-4">{table}</div>
      <ActionForm
        action={addSignerAction}
        fields={["address", "expiresAt"]}
        hidden={{ clientId: client.id }}
        label="Add a signer"
        className="space-y-3 border-t border-slate-100 pt-4"
      >
        <div className="grid gap-3 sm:grid-cols-[1fr_12rem_auto] sm:items-start">
          <Field name="address" label="Signer address" autoComplete="off" spellCheck={false} placeholder="0x…" />
          <Field name="expiresAt" label="Expires" optional type="date" hint="At 00:00 UTC on that day." />
          <div className="sm:pt-6">
            <SubmitButton pendingLabel="Adding…" className={button.secondary}>
              Add signer
            </SubmitButton>
          </div>
        </div>
      </ActionForm>
    </Card>
  );
}
