/**
 * /admin/clients/[clientId]: one client. Enable/disable, every setting, the integration panel
 * (endpoints, snippets, try a sign-in), redirect URIs (shown exactly as stored), post-logout URIs,
 * allowed origins, signers of a developer license, the client secret (shown once), delete (after
 * typing the client's id).
 */
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ConfirmAction } from "@/components/admin/confirm";
import { DeleteCard } from "@/components/admin/delete-card";
import { CopyButton } from "@/components/admin/copy-button";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/admin/form";
import { CopyableId } from "@/components/admin/id";
import { IntegrationPanel } from "@/components/admin/integration";
import { OneTimeNotice } from "@/components/admin/notice";
import { SecretRotation } from "@/components/admin/secret";
import { ValueListCard } from "@/components/admin/value-list";
import { Table, td, th } from "@/components/admin/data-table";
import { Badge, Banner, button, Card, DateText, Mono, PageHeader } from "@/components/admin/ui";
import { integration } from "@/lib/admin/integration";
import { getClient } from "@/lib/admin/operations";
import { MANAGEMENT_SCOPES } from "@/lib/admin/scopes";
import { ADMIN_CLIENT_ID } from "@/lib/admin/session";
import {
  addAllowedOriginAction,
  addPostLogoutRedirectUriAction,
  addRedirectUriAction,
  addSignerAction,
  deleteClientAction,
  removeAllowedOriginAction,
  removePostLogoutRedirectUriAction,
  removeRedirectUriAction,
  revokeSignerAction,
  rotateSecretAction,
  setClientEnabledAction,
  updateClientAction,
} from "../../../_lib/actions";
import { adminPage, clientIdSegment, param, type SearchParams } from "../../../_lib/guard";

type Params = Promise<{ clientId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Client ${clientIdSegment((await params).clientId) ?? "not found"}` };
}

function signerStatus(signer: { expiresAt: Date | null; revokedAt: Date | null }, now: Date) {
  if (signer.revokedAt) return <Badge tone="slate">Revoked</Badge>;
  if (signer.expiresAt && signer.expiresAt <= now) return <Badge tone="amber">Expired</Badge>;
  return <Badge tone="green">Active</Badge>;
}

export default async function ClientPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const clientId = clientIdSegment((await params).clientId);
  const client = clientId === undefined ? undefined : await getClient(k, admin, clientId);
  if (!client) notFound();
  const created = param((await searchParams).created) === "1";
  const now = new Date();
  const id = { clientId: client.id };
  const activeSigners = client.signers.filter((s) => !s.revokedAt && (!s.expiresAt || s.expiresAt > now)).length;

  return (
    <>
      <PageHeader
        title={client.name}
        breadcrumb={
          <Link href="/admin/clients" className="hover:underline">
            Clients
          </Link>
        }
        description={
          <span className="flex flex-wrap items-center gap-2">
            {client.enabled ? <Badge tone="green">Enabled</Badge> : <Badge tone="red">Disabled</Badge>}
            {client.confidential ? <Badge tone="indigo">Confidential</Badge> : <Badge tone="slate">Public</Badge>}
            <span>
              Created <DateText date={client.createdAt} />
            </span>
          </span>
        }
        actions={
          client.enabled ? (
            <ConfirmAction
              action={setClientEnabledAction}
              fields={{ ...id, enabled: "false" }}
              trigger="Disable"
              triggerClassName={button.dangerOutline}
              title={`Disable ${client.name}?`}
              confirmLabel="Disable client"
              pendingLabel="Disabling…"
            >
              Both flows refuse a disabled client at once: new challenges and sign-ins fail with <Mono>invalid_client</Mono>. Tokens already
              issued stay valid until they expire or are revoked. You can enable it again.
            </ConfirmAction>
          ) : (
            <ActionForm action={setClientEnabledAction} fields={[]} hidden={{ ...id, enabled: "true" }} label="Enable client" className="contents">
              <SubmitButton pendingLabel="Enabling…">Enable</SubmitButton>
            </ActionForm>
          )
        }
      />
      {created && <OneTimeNotice param="created">Client created. Add a redirect URI, and a signer or a secret, so it can get tokens.</OneTimeNotice>}
      {client.id === ADMIN_CLIENT_ID && (
        <Banner tone="info">
          This is the dashboard&apos;s own client: admins sign in through it. Keyfob registers it again, enabled and with its callback,
          at every admin sign-in.
        </Banner>
      )}
      {!client.enabled && (
        <Banner tone="error">This client is disabled: Keyfob refuses its challenges, sign-ins and token requests.</Banner>
      )}

      <div className="grid grid-cols-[minmax(0,1fr)] gap-6">
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
              <a className="text-indigo-700 hover:underline" href="#integration">
                Integration
              </a>
            </dd>
          </dl>
        </Card>

        <IntegrationPanel clientId={client.id} data={integration(k.config.issuerUrl, { ...client, redirectUris: client.redirectUris.map((r) => r.uri) }, { chainId: k.config.chainId })} tryHref={`/admin/clients/${encodeURIComponent(client.id)}/try`} />

        <ValueListCard
          id="redirect-uris"
          title="Redirect URIs"
          description="Matched exactly as written: https, or http on localhost only; no fragment. Flow A's domain is one of these."
          clientId={client.id}
          field="uri"
          values={client.redirectUris.map(({ uri }) => uri)}
          empty="No redirect URIs yet: the client cannot sign anyone in until it has one."
          listLabel="Registered redirect URIs"
          remove={{ action: removeRedirectUriAction, title: "Remove this redirect URI?", consequence: "Sign-ins and challenges for this URI are refused from now on." }}
          add={{ action: addRedirectUriAction, formLabel: "Add a redirect URI", fieldLabel: "New redirect URI", placeholder: "https://app.example.com/callback", button: "Add URI" }}
        />

        <ValueListCard
          id="post-logout-redirect-uris"
          title="Post-logout redirect URIs"
          description="Where the application may send the browser after it logs the user out at Keyfob (RP-Initiated Logout), matched exactly like redirect URIs."
          clientId={client.id}
          field="uri"
          values={client.postLogoutRedirectUris.map(({ uri }) => uri)}
          empty="None: after a logout Keyfob shows its own signed-out page."
          listLabel="Registered post-logout redirect URIs"
          remove={{
            action: removePostLogoutRedirectUriAction,
            title: "Remove this post-logout redirect URI?",
            consequence: "Logouts that ask to return here get Keyfob's signed-out page from now on.",
          }}
          add={{
            action: addPostLogoutRedirectUriAction,
            formLabel: "Add a post-logout redirect URI",
            fieldLabel: "New post-logout redirect URI",
            placeholder: "https://app.example.com/signed-out",
            button: "Add URI",
          }}
        />

        <ValueListCard
          id="allowed-origins"
          title="Browser applications (CORS)"
          description={
            <>
              Web pages on these origins may call the token, userinfo and revocation endpoints and Flow A for this client. The origins
              of its redirect URIs are always allowed; add others here (scheme, host and port, e.g. <Mono>https://app.example.com</Mono>).
            </>
          }
          clientId={client.id}
          field="origin"
          values={client.allowedOrigins.map(({ origin }) => origin)}
          empty="No extra origins: only pages on the redirect URIs' origins may call Keyfob from a browser."
          listLabel="Allowed origins"
          remove={{ action: removeAllowedOriginAction, title: "Remove this origin?", consequence: "Browser requests from this origin are refused from now on." }}
          add={{ action: addAllowedOriginAction, formLabel: "Allow an origin", fieldLabel: "New allowed origin", placeholder: "https://app.example.com", button: "Allow origin" }}
        />

        <Card
          id="signers"
          title="Signers"
          description={
            <>
              Keys that may sign Flow A challenges for this license ({activeSigners} active). Revocation applies to the next token request.
            </>
          }
        >
          {client.signers.length === 0 ? (
            <p className="mb-4 text-sm text-slate-600">No signers. The license address itself can always sign for itself.</p>
          ) : (
            <div className="mb-4">
              <Table
                caption="Signers"
                head={
                  <tr>
                    <th className={th}>Address</th>
                    <th className={th}>Status</th>
                    <th className={`${th} hidden md:table-cell`}>Enabled</th>
                    <th className={th}>Expires</th>
                    <th className={`${th} hidden md:table-cell`}>Revoked</th>
                    <th className={th}>
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                }
              >
                {client.signers.map((signer) => (
                  <tr key={signer.address}>
                    <td className={td}>
                      <CopyableId value={signer.address} label={`signer ${signer.address}`} />
                    </td>
                    <td className={td}>{signerStatus(signer, now)}</td>
                    <td className={`${td} hidden md:table-cell`}>
                      <DateText date={signer.enabledAt} />
                    </td>
                    <td className={td}>{signer.expiresAt ? <DateText date={signer.expiresAt} /> : <span className="text-slate-500">Never</span>}</td>
                    <td className={`${td} hidden md:table-cell`}>
                      <DateText date={signer.revokedAt} />
                    </td>
                    <td className={`${td} text-right`}>
                      {!signer.revokedAt && (
                        <ConfirmAction
                          action={revokeSignerAction}
                          fields={{ ...id, address: signer.address }}
                          trigger="Revoke"
                          triggerLabel={`Revoke signer ${signer.address}`}
                          title="Revoke this signer?"
                          confirmLabel="Revoke signer"
                          pendingLabel="Revoking…"
                          subject={signer.address}
                        >
                          Its next token request for {client.name} is refused. Adding it again later enables it anew.
                        </ConfirmAction>
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
            </div>
          )}
          <ActionForm action={addSignerAction} fields={["address", "expiresAt"]} hidden={id} label="Add a signer" className="space-y-3 border-t border-slate-100 pt-4">
            <div className="grid gap-3 sm:grid-cols-[1fr_12rem_auto] sm:items-start">
              <Field name="address" label="Signer address" autoComplete="off" spellCheck={false} placeholder="0x…" />
              <Field name="expiresAt" label="Expires" optional type="date" hint="At 00:00 UTC on that day." />
              <div className="sm:pt-6">
                <SubmitButton pendingLabel="Adding…" className={button.secondary}>
                  Add signer
                </SubmitButton>
              </div>
            </div>
          </ActionForm>
        </Card>

        <Card
          id="secret"
          title="Client secret"
          description={
            client.confidential
              ? "This client is confidential: it authenticates at the token endpoint with its secret. Keyfob stores only a hash."
              : "This client is public (PKCE, or Flow A signatures). Generate a secret to make it confidential."
          }
        >
          <SecretRotation action={rotateSecretAction} clientId={client.id} confidential={client.confidential} />
        </Card>

        <Card
          id="settings"
          title="Settings"
          description="Changes apply to the next request; each one is written to the audit log with its old and new value. Enable or disable the client with the button at the top."
        >
          <ActionForm
            action={updateClientAction}
            fields={["name", "logoUrl"]}
            hidden={{ ...id, settings: client.confidential || client.managementApi ? "requirePkce resourceServer refreshTokensAllowed managementApi managementScopes" : "requirePkce resourceServer refreshTokensAllowed" }}
            label="Client settings"
          >
            <div className="grid gap-4 sm:grid-cols-2">
              <Field name="name" label="Name" initialValue={client.name} autoComplete="off" />
              <Field name="logoUrl" label="Logo URL" optional initialValue={client.logoUrl ?? ""} type="url" autoComplete="off" spellCheck={false} hint="https only; shown on the sign-in page." />
            </div>
            <fieldset className="space-y-3">
              <legend className="sr-only">Options</legend>
              <Checkbox
                name="requirePkce"
                label="Require PKCE"
                defaultChecked={client.requirePkce}
                hint={
                  client.confidential
                    ? "Authorization requests without a code challenge (S256) are refused. Public clients always need PKCE."
                    : "Public clients always need PKCE, whatever this says; it applies if the client gets a secret."
                }
              />
              <Checkbox name="resourceServer" label="Resource server" defaultChecked={client.resourceServer} hint="May introspect tokens issued to other clients; other clients introspect only their own." />
              <Checkbox
                name="refreshTokensAllowed"
                label="Refresh tokens"
                defaultChecked={client.refreshTokensAllowed}
                hint="May ask for the offline_access scope and get a refresh token with its tokens."
              />
              <Checkbox
                name="managementApi"
                label="Management API"
                defaultChecked={client.managementApi}
                disabled={!client.confidential && !client.managementApi}
                hint={
                  client.confidential ? (
                    <>
                      May get a token (client_credentials) for <Mono>/api/admin/v1</Mono> with the scopes below. Withdrawing it, or a scope, stops its tokens at
                      once.
                    </>
                  ) : (
                    "Only a confidential client (with a secret) can be allowed the management API: generate a secret first."
                  )
                }
              />
              {(client.confidential || client.managementApi) && (
                <fieldset className="ml-7 space-y-2">
                  <legend className="mb-2 text-xs font-medium uppercase tracking-wider text-slate-600">Management API scopes</legend>
                  {Object.entries(MANAGEMENT_SCOPES).map(([scope, meaning]) => (
                    <Checkbox key={scope} name="managementScopes" value={scope} label={scope} defaultChecked={client.managementScopes.includes(scope)} hint={meaning} />
                  ))}
                </fieldset>
              )}
            </fieldset>
            <SubmitButton pendingLabel="Saving…" className={button.secondary}>
              Save settings
            </SubmitButton>
          </ActionForm>
        </Card>

        <DeleteCard
          title="Delete client"
          summary="Deletes the client with its redirect URIs, signers and issued-token records. This cannot be undone."
          action={deleteClientAction}
          fields={id}
          question={`Delete ${client.name}?`}
          typeToConfirm={{ value: client.id, label: "the client ID" }}
        >
          The client, its redirect URIs, its signers and the records of its tokens are deleted. Applications using it stop working. This
          cannot be undone; to stop it temporarily, disable it instead.
        </DeleteCard>
      </div>
    </>
  );
}
