"use client";
/** A form's submit button that shows, while the form's action runs, a spinner and what is happening. */
import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";
import { Spinner } from "./icons";

export function SubmitButton({
  children,
  pendingLabel,
  icon,
  badge,
  className,
}: {
  children: ReactNode;
  pendingLabel: string;
  icon?: ReactNode;
  /** Shown after the label (e.g. "Last used"). */
  badge?: ReactNode;
  className: string;
}) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" className={className} disabled={pending} aria-disabled={pending}>
      {(pending || icon) && (
        <span className="flex size-5 shrink-0 items-center justify-center">{pending ? <Spinner className="size-5" /> : icon}</span>
      )}
      <span className="min-w-0">{pending ? pendingLabel : children}</span>
      {badge}
      {pending && (
        <span className="sr-only" role="status">
          {pendingLabel}
        </span>
      )}
    </button>
  );
}
