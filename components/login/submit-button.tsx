"use client";
/** A form's submit button that shows, while the form's action runs, a spinner and what is happening. */
import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";
import { Spinner } from "./icons";

export function SubmitButton({
  children,
  pendingLabel,
  icon,
  className,
}: {
  children: ReactNode;
  pendingLabel: string;
  icon?: ReactNode;
  className: string;
}) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" className={className} disabled={pending} aria-disabled={pending}>
      {(pending || icon) && (
        <span className="flex size-5 items-center justify-center">{pending ? <Spinner className="size-5" /> : icon}</span>
      )}
      <span>{pending ? pendingLabel : children}</span>
      {pending && (
        <span className="sr-only" role="status">
          {pendingLabel}
        </span>
      )}
    </button>
  );
}
