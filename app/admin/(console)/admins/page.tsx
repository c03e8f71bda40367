/**
 * /admin/admins: who is an admin. Bootstrap admins come from the configuration (ADMIN_ADDRESSES,
 * ADMIN_EMAILS) and are read-only here; the role can be granted to and revoked from any account.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { ConfirmAction } from "@/components/admin/confirm";
import { CopyableId } from "@/components/admin/id";
import { ActionForm, Field, SubmitButton } from "@/components/admin/form";
import { actionsColumn, type Column, DataTable } from "@/components/admin/data-table";
import { Badge, button, Card, DateText, EmptyState, Mono, PageHeader } from "@/components/admin/ui";
import { listAdmins } from "@/lib/admin/operations";
import type { AdminRoleRow } from "@/lib/store/contract";
import { grantAdminAction, revokeAdminAction } from "../../_lib/actions";
import { adminPage } from "../../_lib/guard";

export const metadata: Metadata = { title: "Admins" };

/** The granted roles' columns, for the admin looking (their own row says "You"). */
const columns = (self: string): Column<AdminRoleRow>[] => [
  {
    header: "Account",
    className: "min-w-[12rem]",
    cell: (role) => (
      <>
        <CopyableId value={role.accountId} label={`account ${role.accountId}`} truncate>
          <Link className="font-mono text-[13px] wrap-anywhere text-indigo-700 hover:underline" href={`/admin/accounts/${role.accountId}`}>
            {role.accountId}
          </Link>
        </CopyableId>{" "}
        {role.accountId === self && <Badge tone="indigo">You</Badge>}
      </>
    ),
  },
  { header: "Granted by", hideBelow: "md", cell: (role) => <CopyableId value={role.grantedBy} label="granter" truncate /> },
  { header: "Granted", cell: (role) => <DateText date={role.grantedAt} /> },
  actionsColumn((role) => (
    <ConfirmAction
      action={revokeAdminAction}
      fields={{ accountId: role.accountId }}
      trigger="Revoke"
      triggerLabel={`Revoke the admin role of ${role.accountId}`}
      title="Revoke the admin role?"
      confirmLabel="Revoke role"
      pendingLabel="Revoking…"
      subject={role.accountId}
    >
      {role.accountId === self
        ? "This is your own account: unless the configuration lists you, you lose access to the dashboard at once."
        : "The account loses access to the dashboard at once, unless the configuration lists it."}
    </ConfirmAction>
  )),
];

export default async function AdminsPage() {
  const { k, admin } = await adminPage();
  const granted = await listAdmins(k, admin);
  const { adminAddresses, adminEmails } = k.config;

  return (
    <>
      <PageHeader title="Admins" description="Accounts that may use this dashboard. Changes apply to their very next request." />
      <div className="grid gap-6">
        <Card id="granted" title="Granted admin role" description="Granted here, by account address.">
          <DataTable
            caption="Accounts granted the admin role"
            columns={columns(admin.accountId)}
            rows={granted}
            rowKey={(role) => role.accountId}
            empty={<EmptyState title="No granted admins">Only the configured admins below can use the dashboard.</EmptyState>}
          />
          <ActionForm
            action={grantAdminAction}
            fields={["accountId"]}
            label="Grant the admin role"
            className="mt-5 space-y-3 border-t border-slate-100 pt-4"
          >
            <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
              <Field
                name="accountId"
                label="Grant the admin role to an account"
                className="flex-1"
                autoComplete="off"
                spellCheck={false}
                placeholder="0x…"
                hint="The account's address: a wallet's own address, or the address Keyfob gave a Google or Apple account."
              />
              <div className="sm:pt-6">
                <SubmitButton pendingLabel="Granting…" className={button.secondary}>
                  Grant role
                </SubmitButton>
              </div>
            </div>
          </ActionForm>
        </Card>

        <Card
          id="configured"
          title="Configured admins"
          description="From ADMIN_ADDRESSES and ADMIN_EMAILS (verified emails); change them in the server's environment."
        >
          {adminAddresses.length === 0 && adminEmails.length === 0 ? (
            <p className="text-sm text-slate-600">None configured.</p>
          ) : (
            <ul className="space-y-2 text-sm">
              {adminAddresses.map((address) => (
                <li key={address} className="flex flex-wrap items-center gap-2">
                  <Badge tone="slate">Address</Badge> <Mono>{address}</Mono>
                </li>
              ))}
              {adminEmails.map((email) => (
                <li key={email} className="flex flex-wrap items-center gap-2">
                  <Badge tone="slate">Email</Badge> <Mono>{email}</Mono>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}
