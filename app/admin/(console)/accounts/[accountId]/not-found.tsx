import Link from "next/link";
import { button, EmptyState } from "@/components/admin/ui";

export default function AccountNotFound() {
  return (
    <EmptyState
      title="No such account"
      action={
        <Link href="/admin/accounts" className={button.secondary}>
          Back to the accounts
        </Link>
      }
    >
      It may have been deleted, or the link is wrong.
    </EmptyState>
  );
}
