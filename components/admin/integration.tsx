/**
 * A client's integration panel: issuer, discovery, every endpoint, its registered redirect URIs,
 * and copyable snippets for Flow A (curl, the client library), Flow B (an authorization URL with
 * PKCE, the code exchange, openid-client, DPoP when the client must use it or is public, Auth.js)
 * and, for confidential clients, the management
 * API. The snippets come from lib/admin/integration.ts (the browser test runs them).
 */
import Link from "next/link";
import type { ReactNode } from "react";
import type { integration } from "@/lib/admin/integration";
import { CopyButton } from "./copy-button";
import { CopyableId } from "./id";
import { button, Card, Mono } from "./ui";

type Integration = ReturnType<typeof integration>;

export function Snippet({ id, title, code, children }: { id: string; title: string; code: string; children?: ReactNode }) {
  return (
    <div className="min-w-0">
      <div className="mb-1.5 flex items-end justify-between gap-2">
        <h3 className="text-sm font-medium text-slate-800" id={`${id}-title`}>
          {title}
        </h3>
        <CopyButton value={code} label={`Copy: ${title}`} compact />
      </div>
      {children && <div className="mb-2 text-xs text-slate-600">{children}</div>}
      {/* A focusable scroll box, named by its heading: a region (a plain <pre> may not be named). */}
      {/* biome-ignore lint/a11y/useSemanticElements: a <pre> for its whitespace, a region for its name */}
      <pre
        role="region"
        aria-labelledby={`${id}-title`}
        data-testid={`snippet-${id}`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll box takes focus so that it scrolls by keyboard
        tabIndex={0}
        className="max-h-96 overflow-auto rounded-lg bg-slate-950 p-3 font-mono text-[12.5px] leading-relaxed text-slate-50 ring-1 ring-slate-800 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:outline-none"
      >
        <code>{code}</code>
      </pre>
    </div>
  );
}

function Group({ title, summary, children, open = false }: { title: string; summary: string; children: ReactNode; open?: boolean }) {
  return (
    <details open={open} className="group rounded-lg ring-1 ring-slate-200">
      <summary className="flex cursor-pointer list-none items-start justify-between gap-3 rounded-lg px-3 py-2.5 hover:bg-slate-50 focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:outline-none">
        <span>
          <span className="block text-sm font-semibold text-slate-900">{title}</span>
          <span className="block text-xs text-slate-600">{summary}</span>
        </span>
        <svg
          className="mt-0.5 size-4 shrink-0 text-slate-500 transition group-open:rotate-180"
          viewBox="0 0 20 20"
          fill="currentColor"
          aria-hidden="true"
        >
          <path d="M5.2 7.2a.75.75 0 0 1 1.06 0L10 10.94l3.74-3.74a.75.75 0 1 1 1.06 1.06l-4.27 4.27a.75.75 0 0 1-1.06 0L5.2 8.26a.75.75 0 0 1 0-1.06Z" />
        </svg>
      </summary>
      <div className="space-y-4 border-t border-slate-100 px-3 py-3">{children}</div>
    </details>
  );
}

export function IntegrationPanel({ clientId, data, tryHref }: { clientId: string; data: Integration; tryHref: string }) {
  const { snippets } = data;
  return (
    <Card
      id="integration"
      title="Integration"
      description="Everything an application needs to use this client, with snippets filled in for it."
      actions={
        <Link href={tryHref} className={button.secondary}>
          Try a sign-in
        </Link>
      }
    >
      <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[12rem_minmax(0,1fr)]">
        <dt className="font-medium text-slate-600">Client ID</dt>
        <dd className="min-w-0">
          <CopyableId value={clientId} label="client ID" />
        </dd>
        <dt className="font-medium text-slate-600">Issuer</dt>
        <dd className="min-w-0">
          <CopyableId value={data.issuer} label="issuer" />
        </dd>
        <dt className="font-medium text-slate-600">Discovery</dt>
        <dd className="min-w-0">
          <CopyableId value={data.discovery} label="discovery URL" />
        </dd>
        {data.endpoints.map((endpoint) => (
          <div key={endpoint.url} className="contents">
            <dt className="font-medium text-slate-600">{endpoint.name}</dt>
            <dd className="min-w-0">
              <CopyableId value={endpoint.url} label={`${endpoint.name} endpoint`} />
            </dd>
          </div>
        ))}
        <dt className="font-medium text-slate-600">Redirect URIs</dt>
        <dd className="min-w-0">
          {data.redirectUriRegistered ? (
            <span className="text-slate-600">
              See{" "}
              <a className="text-indigo-700 underline underline-offset-2" href="#redirect-uris">
                Redirect URIs
              </a>
              ; the snippets use <Mono>{data.redirectUri}</Mono>.
            </span>
          ) : (
            <span className="text-amber-800">
              None registered yet: the snippets use a placeholder, <Mono>{data.redirectUri}</Mono>. Add the application&apos;s own first.
            </span>
          )}
        </dd>
      </dl>

      <div className="mt-5 space-y-3">
        <Group title="Flow A: wallet signature (backend applications)" summary="curl, or Keyfob's client library">
          <Snippet id="flow-a-challenge" title="1. Ask for a challenge (curl)" code={snippets.flowAChallenge} />
          <Snippet id="flow-a-submit" title="2. Submit its signature (curl)" code={snippets.flowASubmit} />
          <Snippet id="flow-a-library" title="The client library (TypeScript)" code={snippets.flowALibrary} />
        </Group>
        <Group title="Flow B: hosted login (users)" summary="An authorization URL with PKCE, the code exchange, openid-client, Auth.js">
          <Snippet id="flow-b-authorize" title="Authorization URL with PKCE (shell)" code={snippets.authorizationUrl} />
          <Snippet id="flow-b-token" title="Exchange the code (curl)" code={snippets.tokenExchange} />
          <Snippet id="flow-b-openid-client" title="openid-client (Node.js)" code={snippets.openidClient} />
          {snippets.dpop && <Snippet id="flow-b-dpop" title="DPoP-bound tokens with openid-client (Node.js)" code={snippets.dpop} />}
          <Snippet id="flow-b-authjs" title="Auth.js (Next.js)" code={snippets.authjs} />
        </Group>
        {snippets.managementApi && (
          <Group title="Management API" summary="A keyfob:admin token with client_credentials, when this client is allowed it (Settings)">
            <Snippet id="management-api" title="client_credentials, then a call (curl)" code={snippets.managementApi} />
          </Group>
        )}
      </div>
    </Card>
  );
}
