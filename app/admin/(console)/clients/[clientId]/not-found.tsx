import Link from "next/link";
import { button, EmptyState } from "@/components/admin/ui";

export default function ClientNotFound() {
  return (
    <EmptyState
      title="No such client"
      action={
        <Link href="/admin/clients" className={button.secondary}>
          Back to the clients
        </Link>
      }
    >
      It may have been deleted, or the link is wrong.
    </EmptyState>
  );
}
