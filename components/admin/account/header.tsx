/** The account page's header: its name, status and age, block / unblock, and the banner of a blocked account. */
import Link from "next/link";
import { blockAccountAction, unblockAccountAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { ActionForm, SubmitButton } from "@/components/admin/form";
import { Badge, Banner, button, DateText, PageHeader } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

export function AccountHeader({ account }: { account: AdminAccount }) {
  const id = { accountId: account.id };
  const emails = [...new Set(account.identities.map((i) => i.email).filter(Boolean))];
  return (
    <>
      <PageHeader
        title={emails[0] ?? "Account"}
        breadcrumb={
          <Link href="/admin/accounts" className="hover:underline">
            Accounts
          </Link>
        }
        description={
          <span className="flex flex-wrap items-center gap-2">
            {account.blockedAt ? <Badge tone="red">Blocked</Badge> : <Badge tone="green">Active</Badge>}
            {(account.adminRole || account.configuredAdmin) && <Badge tone="indigo">Admin</Badge>}
            <span>
              Created <DateText date={account.createdAt} />
            </span>
          </span>
        }
        actions={
          account.blockedAt ? (
            <ActionForm action={unblockAccountAction} fields={[]} hidden={id} label="Unblock the account" className="contents">
              <SubmitButton pendingLabel="Unblocking…" className={button.secondary}>
                Unblock
              </SubmitButton>
            </ActionForm>
          ) : (
            <ConfirmAction
              action={blockAccountAction}
              fields={id}
              trigger="Block"
              triggerClassName={button.dangerOutline}
              title="Block this account?"
              confirmLabel="Block account"
              pendingLabel="Blocking…"
              subject={account.id}
            >
              <p className="mb-2 font-medium text-slate-900">This revokes everything it holds at once, on every instance:</p>
              <ul className="list-disc space-y-1 pl-5">
                <li>
                  its {account.sessions.length === 1 ? "login session" : `${account.sessions.length} login sessions`} (it is signed out
                  everywhere);
                </li>
                <li>
                  its {account.holdings.accessTokens} active access token{account.holdings.accessTokens === 1 ? "" : "s"} (its linked
                  wallets&apos; too) and {account.holdings.refreshGrants} refresh grant{account.holdings.refreshGrants === 1 ? "" : "s"},
                  and any unredeemed code;
                </li>
                <li>no login is possible any more: hosted login, Flow A for its wallets, Continue as.</li>
              </ul>
              <p className="mt-2">Unblocking lets it log in again; nothing revoked comes back.</p>
            </ConfirmAction>
          )
        }
      />
      {account.blockedAt && (
        <Banner tone="error">
          Blocked since <DateText date={account.blockedAt} />: Keyfob refuses every login of this account and its wallets.
        </Banner>
      )}
    </>
  );
}
