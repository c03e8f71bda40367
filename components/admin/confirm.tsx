"use client";
/**
 * Destructive actions ask first: the button opens a modal <dialog> (focus moves into it and stays
 * there, Escape closes it, focus returns to the button), whose form runs the server action.
 * Cancel has the initial focus, so pressing Enter by habit does nothing harmful. The most
 * destructive ones (`typeToConfirm`) also ask to type a value (the id): the confirm button stays
 * disabled until it matches, and the value is sent as `confirm` for the server to check again.
 */
import { useActionState, useEffect, useId, useRef, useState, type ReactNode } from "react";
import type { FormAction } from "./form-state";
import { capitalise, SubmitButton } from "./form";
import { button, inputClass, Mono } from "./ui";

export function ConfirmAction({
  action,
  fields,
  trigger,
  triggerClassName = button.smallDanger,
  triggerLabel,
  title,
  subject,
  children,
  confirmLabel,
  pendingLabel = "Working…",
  tone = "danger",
  typeToConfirm,
}: {
  action: FormAction;
  /** Hidden inputs of the action's form. */
  fields: Record<string, string>;
  trigger: ReactNode;
  triggerClassName?: string;
  /** An accessible name for the trigger when its text alone is ambiguous (e.g. "Revoke" in a table row). */
  triggerLabel?: string;
  title: string;
  /** The id or value the action is on, shown first in the dialog. */
  subject?: string;
  children: ReactNode;
  confirmLabel: string;
  pendingLabel?: string;
  tone?: "danger" | "primary";
  /** A value to type before the action can run, and what to call it ("the client ID"). */
  typeToConfirm?: { value: string; label: string; ignoreCase?: boolean };
}) {
  const [state, formAction] = useActionState(action, {});
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const typedId = useId();
  const same = (a: string, b: string) => (typeToConfirm?.ignoreCase ? a.toLowerCase() === b.toLowerCase() : a === b);
  const blocked = typeToConfirm !== undefined && !same(typed.trim(), typeToConfirm.value);
  return (
    <>
      <button type="button" className={triggerClassName} aria-label={triggerLabel} aria-haspopup="dialog" onClick={() => setOpen(true)}>
        {trigger}
      </button>
      {state.ok && state.message && !open && (
        <span role="status" className="ml-2 text-sm text-emerald-800">
          {state.message}
        </span>
      )}
      <Dialog
        open={open}
        onClose={() => {
          setOpen(false);
          setTyped("");
        }}
        title={title}
        closeWhen={state.ok ? state.at : undefined}
      >
        <form action={formAction}>
          {Object.entries(fields).map(([name, value]) => (
            <input key={name} type="hidden" name={name} value={value} />
          ))}
          <div className="text-sm leading-relaxed text-slate-700">
            {subject !== undefined && (
              <p className="mb-2">
                <Mono>{subject}</Mono>
              </p>
            )}
            {children}
          </div>
          {typeToConfirm && (
            <div className="mt-4">
              <label htmlFor={typedId} className="mb-1 block text-sm font-medium text-slate-800">
                Type {typeToConfirm.label} to confirm
              </label>
              <input
                id={typedId}
                name="confirm"
                value={typed}
                onChange={(event) => setTyped(event.target.value)}
                autoComplete="off"
                spellCheck={false}
                className={`${inputClass} font-mono`}
              />
            </div>
          )}
          {!state.ok && state.error && (
            <p role="alert" className="mt-4 rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
              {capitalise(state.error)}
            </p>
          )}
          <DialogButtons
            confirm={
              <SubmitButton className={tone === "danger" ? button.danger : button.primary} pendingLabel={pendingLabel} disabled={blocked}>
                {confirmLabel}
              </SubmitButton>
            }
            onCancel={() => setOpen(false)}
          />
        </form>
      </Dialog>
    </>
  );
}

export function DialogButtons({
  confirm,
  onCancel,
  cancelLabel = "Cancel",
}: {
  confirm?: ReactNode;
  onCancel: () => void;
  cancelLabel?: string;
}) {
  return (
    <div className="mt-6 flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
      <button type="button" className={button.secondary} onClick={onCancel} data-autofocus>
        {cancelLabel}
      </button>
      {confirm}
    </div>
  );
}

/** A modal dialog on the native <dialog> element. `closeWhen` closes it when it changes (an action succeeded). */
export function Dialog({
  open,
  onClose,
  title,
  children,
  closeWhen,
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  children: ReactNode;
  closeWhen?: number;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      dialog.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: closes when closeWhen changes, not when the parent passes a new onClose
  useEffect(() => {
    if (closeWhen !== undefined) onClose();
  }, [closeWhen]);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: a click on the backdrop; by keyboard, Escape closes the <dialog> (onClose)
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={onClose}
      onClick={(event) => {
        if (event.target === ref.current) onClose(); // a click on the backdrop
      }}
      className="m-auto w-[calc(100%-2rem)] max-w-md rounded-2xl bg-white p-0 text-slate-900 shadow-xl ring-1 ring-slate-200 backdrop:bg-black/50"
    >
      {open && (
        <div className="p-5 sm:p-6">
          <h2 id={titleId} className="mb-2 text-lg font-semibold text-slate-900">
            {title}
          </h2>
          {children}
        </div>
      )}
    </dialog>
  );
}
