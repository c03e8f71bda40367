/** The not-found page of one record (an account, a client): a way back to its list. */
import Link from "next/link";
import { button, EmptyState } from "./ui";

export function RecordNotFound({ title, backHref, backLabel }: { title: string; backHref: string; backLabel: string }) {
  return (
    <EmptyState
      title={title}
      action={
        <Link href={backHref} className={button.secondary}>
          {backLabel}
        </Link>
      }
    >
      It may have been deleted, or the link is wrong.
    </EmptyState>
  );
}
