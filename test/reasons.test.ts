/**
 * Reason codes (lib/oauth/reasons.ts): every code lib/ may give has a message in every catalog,
 * with the parameters of its English description and no others, and that description (what API
 * clients read as error_description) is in RFC 6749's character set. The catalogs hold no message
 * for a code that no longer exists.
 */
import { describe, expect, it } from "vitest";
import { sessionRefusal, walletRefusal } from "@/components/login/login-result";
import { MESSAGES, reasonText } from "@/i18n/messages";
import { LOCALES } from "@/i18n/locales";
import { OAuthError } from "@/lib/oauth/errors";
import { describeReason, REASONS, type ReasonCode } from "@/lib/oauth/reasons";

const CODES = Object.keys(REASONS) as ReasonCode[];
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)/g)].map((m) => m[1]).sort();
/** RFC 6749 5.2: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ). */
const DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

describe("reason codes", () => {
  for (const locale of LOCALES) {
    it(`${locale}: a message for every code, with the English description's parameters`, () => {
      const catalog = MESSAGES[locale].reasons as Record<string, string>;
      expect(Object.keys(catalog).sort()).toEqual([...CODES].sort());
      for (const code of CODES) {
        expect(placeholders(catalog[code]), code).toEqual(placeholders(REASONS[code]));
        const params = Object.fromEntries(placeholders(REASONS[code]).map((name) => [name, 7]));
        expect(reasonText(locale, { code, params }), code).not.toMatch(/[{}]/);
      }
    });
  }

  it("describes each code in RFC 6749's error_description characters, its parameters filled in", () => {
    for (const code of CODES) expect(REASONS[code], code).toMatch(DESCRIPTION);
    const error = new OAuthError("invalid_request", { code: "body_too_large", params: { max: 16384 } }, 413);
    expect([error.message, error.why, error.status]).toEqual([
      "the request body must not exceed 16384 bytes",
      { code: "body_too_large", params: { max: 16384 } },
      413,
    ]);
    expect(describeReason({ code: "unknown_client" })).toBe("This application is unknown or disabled.");
  });

  it("words a wallet message's refusal by its code, not its English", () => {
    expect(walletRefusal({ code: "siwe_clock" }, "refused")).toEqual({ error: "clock" });
    expect(walletRefusal({ code: "signature_mismatch" }, "refused")).toEqual({ error: "badSignature" });
    expect(walletRefusal({ code: "wallet_link_expired" }, "wrongMessage")).toEqual({ error: "linkExpired", restart: true });
    expect(walletRefusal(new OAuthError("invalid_grant", "anything").why, "refused")).toEqual({ error: "refused" });
    // A refusal of the session asking /account for a change: only a new sign-in gets past it.
    expect(sessionRefusal({ code: "login_not_recent" })).toEqual({ error: "loginNotRecent", restart: true });
    expect(sessionRefusal({ code: "contract_session" })).toEqual({ error: "contractSession", restart: true });
    expect(sessionRefusal({ code: "siwe_clock" })).toBeUndefined();
  });
});
