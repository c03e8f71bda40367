/** The account page's foot: deleting the account, after typing its address. */
import { deleteAccountAction } from "@/app/admin/_lib/actions";
import { DeleteCard } from "@/components/admin/delete-card";
import type { AdminAccount } from "./types";

export function DeleteAccount({ account }: { account: AdminAccount }) {
  return (
    <DeleteCard
      title="Delete account"
      summary="Deletes the account with its identities and sessions, and revokes its tokens. Its audit events stay. To keep someone out, block instead: a deleted identity that signs in again gets a new, empty account."
      action={deleteAccountAction}
      fields={{ accountId: account.id }}
      question="Delete this account?"
      typeToConfirm={{ value: account.id, label: "the account's address", ignoreCase: true }}
    >
      Its identities, linked wallets and sessions are deleted, its access and refresh tokens revoked, and its admin role removed. This
      cannot be undone.
    </DeleteCard>
  );
}
