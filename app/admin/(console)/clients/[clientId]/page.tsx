/**
 * /admin/clients/[clientId]: one client. Enable/disable, every setting, the integration panel
 * (endpoints, snippets, try a sign-in), redirect URIs (shown exactly as stored), post-logout URIs,
 * allowed origins, back-channel logout, signers of a developer license, the client secret (shown once), delete (after
 * typing the client's id). Each part is a section of components/admin/client, all on the page,
 * with links to each beside them (above them on narrow screens). The dashboard's own client
 * (keyfob-admin) is read-only: its details only.
 */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ClientAuthentication } from "@/components/admin/client/authentication";
import { BackchannelLogout } from "@/components/admin/client/backchannel-logout";
import { DeleteClient } from "@/components/admin/client/danger-zone";
import { ClientDetails } from "@/components/admin/client/details";
import { ClientHeader } from "@/components/admin/client/header";
import { ClientSections } from "@/components/admin/client/sections";
import { AllowedOrigins } from "@/components/admin/client/origins";
import { PostLogoutRedirectUris, RedirectUris } from "@/components/admin/client/redirect-uris";
import { ClientSecret } from "@/components/admin/client/secret";
import { ClientSettings } from "@/components/admin/client/settings";
import { Signers } from "@/components/admin/client/signers";
import { IntegrationPanel } from "@/components/admin/integration";
import { integration } from "@/lib/admin/integration";
import { getClient } from "@/lib/admin/operations";
import { ADMIN_CLIENT_ID } from "@/lib/clients/client-id";
import { adminPage, clientIdSegment, param, type SearchParams } from "../../../_lib/guard";

type Params = Promise<{ clientId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Client ${clientIdSegment((await params).clientId) ?? "not found"}` };
}

export default async function ClientPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const clientId = clientIdSegment((await params).clientId);
  const client = clientId === undefined ? undefined : await getClient(k, admin, clientId);
  if (!client) notFound();
  const created = param((await searchParams).created) === "1";
  const integrationData = integration(
    k.config.issuerUrl,
    { ...client, redirectUris: client.redirectUris.map((r) => r.uri) },
    { chainId: k.config.chainId },
  );

  // The dashboard's own client is read-only (lib/admin/changes.ts refuses changes to it): its details only.
  if (client.id === ADMIN_CLIENT_ID)
    return (
      <>
        <ClientHeader client={client} created={created} />
        <ClientDetails client={client} />
      </>
    );
  return (
    <>
      <ClientHeader client={client} created={created} />
      <div className="grid grid-cols-[minmax(0,1fr)] gap-6 lg:grid-cols-[10rem_minmax(0,1fr)]">
        <ClientSections />
        <div className="grid grid-cols-[minmax(0,1fr)] gap-6">
          <ClientDetails client={client} />
          <IntegrationPanel clientId={client.id} data={integrationData} tryHref={`/admin/clients/${encodeURIComponent(client.id)}/try`} />
          <RedirectUris client={client} />
          <PostLogoutRedirectUris client={client} />
          <AllowedOrigins client={client} />
          <Signers client={client} />
          <ClientSecret client={client} />
          <ClientAuthentication client={client} />
          <ClientSettings client={client} />
          <BackchannelLogout client={client} />
          <DeleteClient client={client} />
        </div>
      </div>
    </>
  );
}
