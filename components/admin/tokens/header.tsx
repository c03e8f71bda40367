/** The Tokens page's header: what the page lists, a link to the account shown, and revoking all of its holder's tokens. */
import Link from "next/link";
import { revokeTokensAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { button, PageHeader } from "@/components/admin/ui";
import type { TokenHolder } from "./types";

export function TokensHeader({ holder, total }: { holder: TokenHolder; total: number }) {
  const { target, scope } = holder;
  return (
    <PageHeader
      title="Tokens"
      description={
        <>
          Active access tokens (issued, not expired, not revoked) and refresh grants. Revoked tokens fail introspection and userinfo at
          once. An account&apos;s tokens include its linked wallets&apos; Flow A tokens.
          {target.accountId && (
            <>
              {" "}
              <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${target.accountId}`}>
                Open the account
              </Link>
            </>
          )}
        </>
      }
      actions={
        // Revoking all revokes every token of the holder: not offered while the list shows its vehicle tokens only.
        (target.clientId || target.accountId) && !holder.vehicleOnly && total > 0 ? (
          <ConfirmAction
            action={revokeTokensAction}
            fields={target}
            trigger={`Revoke all ${total}`}
            triggerClassName={button.danger}
            title={`Revoke all active tokens of ${scope}?`}
            confirmLabel="Revoke all"
            pendingLabel="Revoking…"
          >
            Every active access token of {scope} ({total}) is revoked. Refresh grants are not: an application holding one gets new tokens
            with it unless its refresh grants (below) are revoked too.
          </ConfirmAction>
        ) : undefined
      }
    />
  );
}
