/**
 * /admin/tokens: active (unexpired, unrevoked) access tokens, for a client and/or an account (or
 * their vehicle tokens only), newest first, and the live refresh-token grants (one row per family) below them. Revoke one, or
 * every active token or refresh grant of the client or account shown.
 */
import type { Metadata } from "next";
import { AccessTokens } from "@/components/admin/tokens/access-tokens";
import { TokensFilter } from "@/components/admin/tokens/filter";
import { TokensHeader } from "@/components/admin/tokens/header";
import { RefreshGrants } from "@/components/admin/tokens/refresh-grants";
import type { TokenHolder } from "@/components/admin/tokens/types";
import { Card } from "@/components/admin/ui";
import { parseTokenQuery } from "@/lib/admin/filters";
import { listActiveTokens, listRefreshGrants } from "@/lib/admin/operations";
import { normalizeClientId } from "@/lib/clients/client-id";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Tokens" };

export default async function TokensPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  // The same reading as the management API's (lib/admin/filters.ts): a field that cannot be a filter gets its error and no list.
  const { values, filter: parsed, errors } = parseTokenQuery((name) => param(query[name]));
  const invalid = Object.keys(errors).length > 0;
  const clientId = parsed.clientId && normalizeClientId(parsed.clientId);
  const accountId = parsed.accountId;
  const vehicleOnly = parsed.vehicle === true;

  const [result, grants] = invalid
    ? [
        { items: [], total: 0, page: 1, pageSize: 20 },
        { items: [], total: 0, page: 1, pageSize: 20 },
      ]
    : await Promise.all([
        listActiveTokens(k, admin, { clientId, accountId, vehicle: vehicleOnly, page: pageNumber(query.page) }),
        listRefreshGrants(k, admin, { clientId, accountId, page: pageNumber(query.rpage) }),
      ]);
  const filter = {
    ...(clientId && { client: clientId }),
    ...(accountId && { account: accountId }),
    ...(vehicleOnly && { kind: "vehicle" }),
  };
  const href = (page: number) => `/admin/tokens?${new URLSearchParams({ ...filter, page: String(page), rpage: String(grants.page) })}`;
  const grantsHref = (page: number) =>
    `/admin/tokens?${new URLSearchParams({ ...filter, page: String(result.page), rpage: String(page) })}#refresh-grants`;
  const holder: TokenHolder = {
    target: { ...(clientId && { clientId }), ...(accountId && { accountId }) },
    scope: [clientId && `client ${clientId}`, accountId && `account ${accountId}`].filter(Boolean).join(" and "),
    invalid,
    vehicleOnly,
  };

  return (
    <>
      <TokensHeader holder={holder} total={result.total} />
      <Card>
        <TokensFilter values={values} errors={errors} />
        <AccessTokens tokens={{ ...result, href }} holder={holder} />
      </Card>
      <div className="mt-6">
        <RefreshGrants grants={{ ...grants, href: grantsHref }} holder={holder} />
      </div>
    </>
  );
}
