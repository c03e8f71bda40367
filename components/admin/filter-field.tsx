/** The filters of a list page (a GET form): a labelled control with its error from the query. */
import type { ReactNode } from "react";
import { inputClass } from "./ui";

export function FilterField({ id, title, error, children }: { id: string; title: string; error?: string; children: ReactNode }) {
  return (
    <div>
      <label htmlFor={id} className="mb-1 block text-sm font-medium text-slate-800">
        {title}
      </label>
      {children}
      {error && (
        <p id={`${id}-error`} className="mt-1 text-sm font-medium text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}

/** A filter's input or select: its name, current value, and the error FilterField shows. */
export const filterControl = (id: string, name: string, value: string, error?: string) => ({
  id,
  name,
  defaultValue: value,
  "aria-invalid": error ? true : undefined,
  "aria-describedby": error ? `${id}-error` : undefined,
  className: inputClass,
});
