"use client";
/**
 * Dashboard forms: a server action run through useActionState, field-level errors next to their
 * fields (aria-invalid + aria-describedby, focus moved to the first one), the submitted values kept
 * after an error, and a pending state on the submit button.
 */
import { createContext, useActionState, useContext, useEffect, useId, useRef, type InputHTMLAttributes, type ReactNode } from "react";
import { useFormStatus } from "react-dom";
import type { FormAction, FormState } from "./form-state";
import { button, inputClass } from "./ui";

const StateContext = createContext<FormState>({});

export function ActionForm({
  action,
  fields,
  children,
  className = "space-y-4",
  hidden,
  label,
}: {
  action: FormAction;
  /** The names of the visible fields (errors for other names are shown for the whole form). */
  fields: string[];
  children: ReactNode;
  className?: string;
  hidden?: Record<string, string>;
  /** The form's accessible name. */
  label: string;
}) {
  const [state, formAction] = useActionState(action, {});
  const formRef = useRef<HTMLFormElement>(null);
  const fieldProblem = Object.keys(state.fieldErrors ?? {}).some((name) => fields.includes(name));

  useEffect(() => {
    if (!state.at) return;
    if (state.ok) return;
    const invalid = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    invalid?.focus();
  }, [state]);

  return (
    <StateContext value={state}>
      <form ref={formRef} action={formAction} noValidate className={className} aria-label={label}>
        {hidden && Object.entries(hidden).map(([name, value]) => <input key={name} type="hidden" name={name} value={value} />)}
        {children}
        {!state.ok && state.error && (
          <p role="alert" className="rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
            {fieldProblem ? "Please correct the highlighted fields." : capitalise(state.error)}
          </p>
        )}
        {state.ok && state.message && (
          <p role="status" className="rounded-lg border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-900">
            {state.message}
          </p>
        )}
      </form>
    </StateContext>
  );
}

type FieldProps = {
  name: string;
  label: string;
  hint?: ReactNode;
  optional?: boolean;
  /** What an edit form starts with (the current value); empty by default. */
  initialValue?: string;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "name" | "defaultValue" | "id">;

/** A labelled input with its hint and its error from the last submission. */
export function Field({ name, label, hint, optional, initialValue = "", className, ...input }: FieldProps) {
  return (
    <Labelled name={name} label={label} hint={hint} optional={optional} initialValue={initialValue} className={className}>
      {(control) => <input {...control} aria-required={optional ? undefined : true} className={inputClass} {...input} />}
    </Labelled>
  );
}

/** A labelled choice among `options` (value and label), with its hint and its error from the last submission. */
export function SelectField({
  name,
  label,
  hint,
  initialValue = "",
  options,
  className,
}: Omit<FieldProps, "optional"> & { options: readonly { value: string; label: string }[] }) {
  return (
    <Labelled name={name} label={label} hint={hint} initialValue={initialValue} className={className}>
      {(control) => (
        <select {...control} className={inputClass}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Labelled>
  );
}

/** What a labelled control gets: its id, name, value and how it is described. */
type Control = {
  key: number;
  id: string;
  name: string;
  defaultValue: string;
  "aria-invalid"?: true;
  "aria-describedby"?: string;
};

/** A control with its label above, and its hint and its error from the last submission below. */
function Labelled({
  name,
  label,
  hint,
  optional,
  initialValue,
  className,
  children,
}: Pick<FieldProps, "name" | "label" | "hint" | "optional" | "className"> & {
  initialValue: string;
  children: (control: Control) => ReactNode;
}) {
  const state = useContext(StateContext);
  const id = useId();
  const error = state.fieldErrors?.[name];
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className={className}>
      <label htmlFor={id} className="mb-1 block text-sm font-medium text-slate-800">
        {label} {optional && <span className="font-normal text-slate-500">(optional)</span>}
      </label>
      {children({
        // A new key after every answer: the control shows what was submitted (after an error) or starts as it was.
        key: state.at ?? 0,
        id,
        name,
        defaultValue: state.ok || !state.values ? initialValue : (state.values[name] ?? ""),
        "aria-invalid": error ? true : undefined,
        "aria-describedby": described,
      })}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="mt-1 text-sm font-medium text-red-700">
          {capitalise(error)}
        </p>
      )}
    </div>
  );
}

/** A labelled checkbox (a yes/no setting), with its hint. */
export function Checkbox({
  name,
  value,
  label,
  hint,
  defaultChecked,
  disabled,
}: {
  name: string;
  value?: string;
  label: string;
  hint?: ReactNode;
  defaultChecked: boolean;
  disabled?: boolean;
}) {
  const state = useContext(StateContext);
  const id = useId();
  return (
    <div className="flex gap-3">
      <input
        key={state.at ?? 0}
        id={id}
        type="checkbox"
        name={name}
        value={value}
        defaultChecked={defaultChecked}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        className="mt-0.5 size-4 shrink-0 rounded border-slate-300 text-indigo-600 focus-visible:outline-2 focus-visible:outline-indigo-600"
      />
      <div>
        <label htmlFor={id} className="block text-sm font-medium text-slate-800">
          {label}
        </label>
        {hint && (
          <p id={`${id}-hint`} className="mt-0.5 text-xs text-slate-500">
            {hint}
          </p>
        )}
      </div>
    </div>
  );
}

export function SubmitButton({
  children,
  pendingLabel,
  className = button.primary,
  disabled = false,
}: {
  children: ReactNode;
  pendingLabel: string;
  className?: string;
  disabled?: boolean;
}) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" className={className} disabled={pending || disabled} aria-disabled={pending || disabled}>
      {pending && <Spinner />}
      {pending ? pendingLabel : children}
    </button>
  );
}

export function Spinner() {
  return (
    <svg className="size-4 animate-spin" viewBox="0 0 24 24" fill="none" aria-hidden="true">
      <circle cx="12" cy="12" r="9" stroke="currentColor" strokeOpacity="0.25" strokeWidth="3" />
      <path d="M21 12a9 9 0 0 0-9-9" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
    </svg>
  );
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
