/**
 * A card listing a client's values of one kind (redirect URIs, post-logout redirect URIs, allowed
 * origins): each with a confirmed Remove, and a form to add one.
 */
import type { ReactNode } from "react";
import { ConfirmAction } from "./confirm";
import { ActionForm, Field, SubmitButton } from "./form";
import type { FormAction } from "./form-state";
import { button, Card, Mono } from "./ui";

export function ValueListCard(props: {
  id: string;
  title: string;
  description: ReactNode;
  clientId: string;
  /** The form field's name, as the actions expect it. */
  field: "uri" | "origin";
  values: string[];
  empty: string;
  listLabel: string;
  remove: { action: FormAction; title: string; consequence: string };
  add: { action: FormAction; formLabel: string; fieldLabel: string; placeholder: string; button: string };
}) {
  const { clientId, field, remove, add } = props;
  return (
    <Card id={props.id} title={props.title} description={props.description}>
      {props.values.length === 0 ? (
        <p className="mb-4 text-sm text-slate-600">{props.empty}</p>
      ) : (
        <ul className="mb-4 divide-y divide-slate-100" aria-label={props.listLabel}>
          {props.values.map((value) => (
            <li key={value} className="flex flex-col gap-2 py-2.5 sm:flex-row sm:items-center sm:justify-between">
              <Mono>{value}</Mono>
              <span className="shrink-0">
                <ConfirmAction
                  action={remove.action}
                  fields={{ clientId, [field]: value }}
                  trigger="Remove"
                  triggerLabel={`Remove ${value}`}
                  title={remove.title}
                  confirmLabel="Remove"
                  pendingLabel="Removing…"
                  subject={value}
                >
                  {remove.consequence}
                </ConfirmAction>
              </span>
            </li>
          ))}
        </ul>
      )}
      <ActionForm
        action={add.action}
        fields={[field]}
        hidden={{ clientId }}
        label={add.formLabel}
        className="space-y-3 border-t border-slate-100 pt-4"
      >
        <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
          <Field
            name={field}
            label={add.fieldLabel}
            className="flex-1"
            type="url"
            autoComplete="off"
            spellCheck={false}
            placeholder={add.placeholder}
          />
          <div className="sm:pt-6">
            <SubmitButton pendingLabel="Adding…" className={button.secondary}>
              {add.button}
            </SubmitButton>
          </div>
        </div>
      </ActionForm>
    </Card>
  );
}
