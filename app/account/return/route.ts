/**
 * GET /account/return: where the hosted login sends the browser back after a sign-in started at
 * /account (lib/accounts/account-login.ts), or after its Cancel. The login session it started is
 * in this browser's cookie already; the code and anything else in the query is dropped, and the
 * browser goes on to /account. The hosted login's server action lands here by a client-side fetch
 * (React Server Components), which is asked for a full page load instead, as the dashboard's
 * callback does: a followed redirect would leave /account shown under this address.
 */
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import { browserNavigationOnly } from "../../admin/_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const toAccount = (k: Keyfob) =>
  new Response(null, { status: 303, headers: { Location: `${k.config.issuerUrl}/account`, "Cache-Control": "no-store" } });

export const GET = endpoint("account_return", {
  early: browserNavigationOnly,
  answer: async (k) => toAccount(k),
  refuse: (_error, { keyfob: k }) => toAccount(k),
});
