/**
 * /admin/accounts/[accountId]: one account. Its identities (wallets, Google, Apple, passkeys),
 * linked wallets, live login sessions (revoke one or all), consent grants to third-party clients
 * (revoke), what it holds (links to the Tokens
 * page), block / unblock (which revokes everything at once), and delete.
 */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getAddress, isAddress } from "viem";
import { DeleteAccount } from "@/components/admin/account/danger-zone";
import { Consents } from "@/components/admin/account/consents";
import { AccountHeader } from "@/components/admin/account/header";
import { Identities } from "@/components/admin/account/identities";
import { AccountOverview } from "@/components/admin/account/overview";
import { Sessions } from "@/components/admin/account/sessions";
import { Wallets } from "@/components/admin/account/wallets";
import { getAccount } from "@/lib/admin/operations";
import { adminPage } from "../../../_lib/guard";

type Params = Promise<{ accountId: string }>;

const accountIdSegment = (segment: string) => {
  try {
    const value = decodeURIComponent(segment);
    return isAddress(value, { strict: false }) ? getAddress(value) : undefined;
  } catch {
    return undefined;
  }
};

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Account ${accountIdSegment((await params).accountId) ?? "not found"}` };
}

export default async function AccountPage({ params }: { params: Params }) {
  const { k, admin } = await adminPage();
  const accountId = accountIdSegment((await params).accountId);
  const account = accountId === undefined ? undefined : await getAccount(k, admin, accountId);
  if (!account) notFound();

  return (
    <>
      <AccountHeader account={account} />
      <div className="grid grid-cols-[minmax(0,1fr)] gap-6">
        <AccountOverview account={account} />
        <Identities account={account} />
        <Wallets account={account} />
        <Sessions account={account} />
        <Consents account={account} />
        <DeleteAccount account={account} />
      </div>
    </>
  );
}
