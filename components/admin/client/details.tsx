/** The client page's details: its id (to copy), logo, and links to its tokens, audit events and integration panel (none for the read-only built-in client). */
import Link from "next/link";
import { CopyButton } from "@/components/admin/copy-button";
import { Card, Mono } from "@/components/admin/ui";
import { ADMIN_CLIENT_ID } from "@/lib/clients/client-id";
import type { AdminClient } from "./types";

export function ClientDetails({ client }: { client: AdminClient }) {
  return (
    <Card id="details" title="Details">
      <dl className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
        <dt className="font-medium text-slate-600">Client ID</dt>
        <dd className="flex min-w-0 flex-wrap items-center gap-2">
          <Mono>{client.id}</Mono>
          <CopyButton value={client.id} label="Copy ID" />
        </dd>
        <dt className="font-medium text-slate-600">Logo URL</dt>
        <dd>{client.logoUrl ? <Mono>{client.logoUrl}</Mono> : <span className="text-slate-500">None</span>}</dd>
        <dt className="font-medium text-slate-600">Activity</dt>
        <dd className="flex flex-wrap gap-x-4 gap-y-1">
          <Link className="text-indigo-700 hover:underline" href={`/admin/tokens?client=${encodeURIComponent(client.id)}`}>
            Active tokens
          </Link>
          <Link className="text-indigo-700 hover:underline" href={`/admin/audit?client=${encodeURIComponent(client.id)}`}>
            Audit log
          </Link>
          {client.id !== ADMIN_CLIENT_ID && (
            <a className="text-indigo-700 hover:underline" href="#integration">
              Integration
            </a>
          )}
        </dd>
      </dl>
    </Card>
  );
}
