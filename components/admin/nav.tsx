"use client";
/** The dashboard's sections; the current one is marked (aria-current). Scrolls sideways on phones. */
import Link from "next/link";
import { usePathname } from "next/navigation";
import { focusRing } from "./ui";

const sections = [
  { href: "/admin", label: "Overview" },
  { href: "/admin/clients", label: "Clients" },
  { href: "/admin/tokens", label: "Tokens" },
  { href: "/admin/keys", label: "Signing keys" },
  { href: "/admin/audit", label: "Audit log" },
  { href: "/admin/admins", label: "Admins" },
];

export function AdminNav() {
  const pathname = usePathname();
  const current = (href: string) => (href === "/admin" ? pathname === "/admin" : pathname === href || pathname.startsWith(`${href}/`));
  return (
    <nav aria-label="Dashboard" className="-mx-4 overflow-x-auto px-4 sm:mx-0 sm:px-0">
      <ul className="flex gap-1 whitespace-nowrap">
        {sections.map(({ href, label }) => (
          <li key={href}>
            <Link
              href={href}
              aria-current={current(href) ? "page" : undefined}
              className={`inline-flex min-h-10 items-center rounded-lg px-3 text-sm font-medium transition ${focusRing} ${
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
