/**
 * A record's "Delete …" card at the foot of its page: what deleting takes with it, and a button
 * whose dialog names the record and asks to type its id first.
 */
import type { ReactNode } from "react";
import { ConfirmAction } from "./confirm";
import type { FormAction } from "./form-state";
import { button, Card } from "./ui";

export function DeleteCard({
  title,
  summary,
  action,
  fields,
  question,
  typeToConfirm,
  children,
}: {
  /** The card's heading and its button's text ("Delete client"). */
  title: string;
  /** What deleting removes, beside the button. */
  summary: ReactNode;
  action: FormAction;
  fields: Record<string, string>;
  /** The dialog's title ("Delete this account?"). */
  question: string;
  /** The record's id, shown in the dialog and typed to confirm. */
  typeToConfirm: { value: string; label: string; ignoreCase?: boolean };
  /** The dialog's consequences. */
  children: ReactNode;
}) {
  return (
    <Card id="danger" title={title}>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
        <p className="text-sm text-slate-600">{summary}</p>
        <ConfirmAction
          action={action}
          fields={fields}
          trigger={title}
          triggerClassName={button.danger}
          title={question}
          confirmLabel="Delete permanently"
          pendingLabel="Deleting…"
          typeToConfirm={typeToConfirm}
          subject={typeToConfirm.value}
        >
          {children}
        </ConfirmAction>
      </div>
    </Card>
  );
}
