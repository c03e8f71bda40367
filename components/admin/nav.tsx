"use client";
/**
 * The dashboard's sections; the current one is marked (aria-current). On a phone the tabs wrap onto
 * a second line rather than scrolling sideways, so none is hidden off the edge of the screen.
 */
import Link from "next/link";
import { usePathname } from "next/navigation";
import { focusRing } from "./ui";

const sections = [
  { href: "/admin", label: "Overview" },
  { href: "/admin/clients", label: "Clients" },
  { href: "/admin/accounts", label: "Accounts" },
  { href: "/admin/tokens", label: "Tokens" },
  { href: "/admin/keys", label: "Signing keys" },
  { href: "/admin/audit", label: "Audit log" },
  { href: "/admin/admins", label: "Admins" },
];

export function AdminNav() {
  const pathname = usePathname();
  const current = (href: string) => (href === "/admin" ? pathname === "/admin" : pathname === href || pathname.startsWith(`${href}/`));
  return (
    <nav aria-label="Dashboard">
      <ul className="-mx-1 flex flex-wrap gap-x-0.5 gap-y-1 sm:mx-0 sm:gap-1">
        {sections.map(({ href, label }) => (
          <li key={href}>
            <Link
              href={href}
              aria-current={current(href) ? "page" : undefined}
              className={`inline-flex min-h-9 items-center rounded-lg px-2.5 text-sm font-medium whitespace-nowrap transition sm:min-h-10 sm:px-3 ${focusRing} ${
                current(href) ? "bg-indigo-50 text-indigo-800" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900"
              }`}
            >
              {label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
