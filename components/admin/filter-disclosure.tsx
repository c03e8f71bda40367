"use client";
/**
 * A list page's filters: shown above the list from the sm breakpoint up; at phone width folded
 * behind a "Filters" button (which says how many are set), so that the list comes first. They
 * start open there only when one has an error to show.
 */
import { type ReactNode, useId, useState } from "react";
import { button } from "./ui";

export function FilterDisclosure({ active, invalid, children }: { active: number; invalid: boolean; children: ReactNode }) {
  const [open, setOpen] = useState(invalid);
  const id = useId();
  return (
    <div className="mb-5">
      <button
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen(!open)}
        className={`${button.secondary} sm:hidden`}
      >
        Filters{active > 0 && <span className="text-slate-500"> ({active} set)</span>}
        <svg className={`size-4 transition ${open ? "rotate-180" : ""}`} viewBox="0 0 20 20" fill="currentColor" aria-hidden="true">
          <path d="M5.2 7.2a.75.75 0 0 1 1.06 0L10 10.94l3.74-3.74a.75.75 0 1 1 1.06 1.06l-4.27 4.27a.75.75 0 0 1-1.06 0L5.2 8.26a.75.75 0 0 1 0-1.06Z" />
        </svg>
      </button>
      <div id={id} className={open ? "max-sm:mt-3" : "max-sm:hidden"}>
        {children}
      </div>
    </div>
  );
}
