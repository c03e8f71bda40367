/**
 * The client page's header: its name, status and age, enable / disable (not for the dashboard's own,
 * read-only client), and the notices above the page (just created, the dashboard's own client, disabled).
 */
import Link from "next/link";
import { setClientEnabledAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { ActionForm, SubmitButton } from "@/components/admin/form";
import { OneTimeNotice } from "@/components/admin/notice";
import { Badge, Banner, button, DateText, Mono, PageHeader } from "@/components/admin/ui";
import { ADMIN_CLIENT_ID } from "@/lib/clients/client-id";
import type { AdminClient } from "./types";

export function ClientHeader({ client, created }: { client: AdminClient; created: boolean }) {
  const id = { clientId: client.id };
  return (
    <>
      <PageHeader
        title={client.name}
        breadcrumb={
          <Link href="/admin/clients" className="hover:underline">
            Clients
          </Link>
        }
        description={
          <span className="flex flex-wrap items-center gap-2">
            {client.enabled ? <Badge tone="green">Enabled</Badge> : <Badge tone="red">Disabled</Badge>}
            {client.confidential ? <Badge tone="indigo">Confidential</Badge> : <Badge tone="slate">Public</Badge>}
            <span>
              Created <DateText date={client.createdAt} />
            </span>
          </span>
        }
        actions={
          client.id === ADMIN_CLIENT_ID ? undefined : client.enabled ? (
            <ConfirmAction
              action={setClientEnabledAction}
              fields={{ ...id, enabled: "false" }}
              trigger="Disable"
              triggerClassName={button.dangerOutline}
              title={`Disable ${client.name}?`}
              confirmLabel="Disable client"
              pendingLabel="Disabling…"
            >
              Both flows refuse a disabled client at once: new challenges and sign-ins fail with <Mono>invalid_client</Mono>. Tokens already
              issued stay valid until they expire or are revoked. You can enable it again.
            </ConfirmAction>
          ) : (
            <ActionForm
              action={setClientEnabledAction}
              fields={[]}
              hidden={{ ...id, enabled: "true" }}
              label="Enable client"
              className="contents"
            >
              <SubmitButton pendingLabel="Enabling…">Enable</SubmitButton>
            </ActionForm>
          )
        }
      />
      {created && (
        <OneTimeNotice param="created">Client created. Add a redirect URI, and a signer or a secret, so it can get tokens.</OneTimeNotice>
      )}
      {client.id === ADMIN_CLIENT_ID && (
        <Banner tone="info">
          This is the dashboard&apos;s own client: admins sign in through it. It is built in and read-only: Keyfob registers it itself,
          enabled and with its callback, and refuses changes to it here, from the command line and through the management API.
        </Banner>
      )}
      {!client.enabled && (
        <Banner tone="error">This client is disabled: Keyfob refuses its challenges, sign-ins and token requests.</Banner>
      )}
    </>
  );
}
