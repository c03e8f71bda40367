/**
 * GET /account/login: "Sign in with a wallet or passkey" on the signed-out /account, and (with
 * `fresh=1`, a login that must be new) "Sign in again" on the signed-in one. A plain link to here,
 * then a redirect to the hosted login page (lib/accounts/account-login.ts), so the browser loads
 * that page whole rather than as a client-side step of /account.
 */
import { chooseLocale } from "@/i18n/locales";
import { accountLoginUrl } from "@/lib/accounts/account-login";
import { endpoint, otherMethods } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });

export const GET = endpoint("account_login", {
  answer: async (k, request) =>
    seeOther(
      await accountLoginUrl(k, chooseLocale(null, request.headers.get("accept-language")), {
        fresh: new URL(request.url).searchParams.get("fresh") === "1",
      }),
    ),
  refuse: (_error, { keyfob: k }) => seeOther(`${k.config.issuerUrl}/account?problem=unavailable`),
});
