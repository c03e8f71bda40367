/**
 * /admin/clients/[clientId]/try: "Try a sign-in" for a client. The hosted login runs as the client
 * (PKCE) to Keyfob's own callback, which the admin registers for the client here with one click;
 * after the login the decoded ID and access token are shown (lib/admin/try-sign-in.ts).
 */
import type { Metadata } from "next";
import { cookies } from "next/headers";
import Link from "next/link";
import { notFound } from "next/navigation";
import { CopyButton } from "@/components/admin/copy-button";
import { ActionForm, SubmitButton } from "@/components/admin/form";
import { CopyableId } from "@/components/admin/id";
import { Badge, Banner, button, Card, DateText, Mono, PageHeader } from "@/components/admin/ui";
import { tryRedirectUri } from "@/lib/admin/integration";
import { getClient } from "@/lib/admin/operations";
import { openTryResult, TRY_RESULT_COOKIE, TRY_SCOPE } from "@/lib/admin/try-sign-in";
import { registerTryCallbackAction } from "../../../../_lib/actions";
import { adminPage, clientIdSegment, param, type SearchParams } from "../../../../_lib/guard";

type Params = Promise<{ clientId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Try a sign-in · ${clientIdSegment((await params).clientId) ?? "client not found"}` };
}

function Token({
  id,
  title,
  token,
}: {
  id: string;
  title: string;
  token: { header: Record<string, unknown>; claims: Record<string, unknown> };
}) {
  const text = JSON.stringify(token, null, 2);
  return (
    <div className="min-w-0">
      <div className="mb-1.5 flex items-end justify-between gap-2">
        <h3 id={`${id}-title`} className="text-sm font-semibold text-slate-900">
          {title}
        </h3>
        <CopyButton value={text} label={`Copy the decoded ${title.toLowerCase()}`} compact />
      </div>
      {/* A focusable scroll box, named by its heading: a region (a plain <pre> may not be named). */}
      {/* biome-ignore lint/a11y/useSemanticElements: a <pre> for its whitespace, a region for its name */}
      <pre
        role="region"
        aria-labelledby={`${id}-title`}
        data-testid={id}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll box takes focus so that it scrolls by keyboard
        tabIndex={0}
        className="max-h-[32rem] overflow-auto rounded-lg bg-slate-950 p-3 font-mono text-[12.5px] leading-relaxed text-slate-50 ring-1 ring-slate-800"
      >
        <code>{text}</code>
      </pre>
    </div>
  );
}

export default async function TrySignInPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const clientId = clientIdSegment((await params).clientId);
  const client = clientId === undefined ? undefined : await getClient(k, admin, clientId);
  if (!client) notFound();
  const problem = param((await searchParams).problem).slice(0, 300);
  const callback = tryRedirectUri(k.config.issuerUrl);
  const registered = client.redirectUris.some((r) => r.uri === callback);
  const found = await openTryResult(k, (await cookies()).get(TRY_RESULT_COOKIE)?.value);
  const result = found?.clientId === client.id ? found : undefined;
  const clientPath = `/admin/clients/${encodeURIComponent(client.id)}`;

  return (
    <>
      <PageHeader
        title="Try a sign-in"
        breadcrumb={
          <span className="flex flex-wrap gap-1">
            <Link href="/admin/clients" className="hover:underline">
              Clients
            </Link>
            <span aria-hidden="true">/</span>
            <Link href={clientPath} className="hover:underline">
              {client.name}
            </Link>
          </span>
        }
        description={
          <>
            Sign in through the hosted login as <strong className="font-medium text-slate-800">{client.name}</strong> would send its users,
            with PKCE and the <Mono>{TRY_SCOPE}</Mono> scope, and see the tokens it would get.
          </>
        }
      />
      {problem && <Banner tone="error">{problem}</Banner>}
      {!client.enabled && <Banner tone="error">This client is disabled: Keyfob refuses its sign-ins. Enable it first.</Banner>}
      <div className="grid grid-cols-[minmax(0,1fr)] gap-6">
        <Card id="start" title={registered ? "Start" : "Register Keyfob's test callback"}>
          {registered ? (
            <div className="space-y-3 text-sm text-slate-700">
              <p>
                You will see the client&apos;s sign-in page (wallet, Google, Apple). Afterwards Keyfob returns to its own callback,
                exchanges the code for this client, shows the decoded tokens here, and revokes the access token: it only serves to show the
                claims.
              </p>
              <p className="flex flex-wrap items-center gap-2">
                <a
                  href={`/admin/try/start?${new URLSearchParams({ client: client.id })}`}
                  className={button.primary}
                  aria-disabled={!client.enabled || undefined}
                >
                  Start a test sign-in
                </a>
                <span className="text-slate-500">
                  Callback: <Mono>{callback}</Mono>
                </span>
              </p>
            </div>
          ) : (
            <ActionForm
              action={registerTryCallbackAction}
              fields={["uri"]}
              hidden={{ clientId: client.id }}
              label="Register the test callback"
              className="space-y-3"
            >
              <p className="text-sm text-slate-700">
                A test sign-in must return to a redirect URI registered for the client. Rather than send the code to the application, Keyfob
                returns it to its own callback: register <Mono>{callback}</Mono> as one of this client&apos;s redirect URIs (audited like
                any other; remove it from the client&apos;s page when you no longer need it). Only a signed-in admin&apos;s browser that
                started an attempt can redeem a code sent there.
              </p>
              <SubmitButton pendingLabel="Registering…">Register the test callback</SubmitButton>
            </ActionForm>
          )}
        </Card>

        {result && (
          <Card
            id="result"
            title="Result"
            description={
              <>
                The attempt of <DateText date={result.at} />.
              </>
            }
          >
            {result.ok ? (
              <div className="grid grid-cols-[minmax(0,1fr)] gap-5">
                <div role="status" className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm text-slate-700">
                  <Badge tone="green">Signed in</Badge>
                  <span>
                    Account <CopyableId value={result.subject!.userId} label="account" /> via {result.subject!.connector}.
                  </span>
                  {/^0x[0-9a-fA-F]{40}$/.test(result.subject!.userId) && (
                    <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${result.subject!.userId}`}>
                      Open the account
                    </Link>
                  )}
                </div>
                <p className="text-sm text-slate-600">
                  The ID token was verified against Keyfob&apos;s keys for this client; the access token was recorded, then revoked. The{" "}
                  <Mono>sub</Mono> claim is the platform&apos;s encoding of the account and the connector.
                </p>
                <Token id="decoded-id-token" title="ID token" token={result.idToken!} />
                <Token id="decoded-access-token" title="Access token" token={result.accessToken!} />
              </div>
            ) : (
              <div role="alert" className="space-y-1 text-sm">
                <p>
                  <Badge tone="red">{result.error ?? "failed"}</Badge> <span className="text-slate-800">The sign-in did not complete.</span>
                </p>
                {result.description && <p className="text-slate-700">{result.description}</p>}
              </div>
            )}
          </Card>
        )}
      </div>
    </>
  );
}
