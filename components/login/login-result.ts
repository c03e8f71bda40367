/**
 * What a login server action answers when it does not redirect: a key of the `loginErrors`
 * catalog (the page puts it into its language), whether only starting again helps, and how long
 * to wait (rate limits).
 */
import type { Messages } from "@/i18n/messages";
import type { Reason, ReasonCode } from "@/lib/oauth/reasons";

export type LoginErrorKey = keyof Messages["loginErrors"];
/** Refusals that trying again cannot get past: each has a title of its own (`loginErrorTitles`), and no "Try again". */
export type FinalRefusal = keyof Messages["loginErrorTitles"];
export type LoginResult = { error: LoginErrorKey; restart?: boolean; seconds?: number } | undefined;

/** The catalog key for each refusal of a wallet's signed message (a login or an account link). */
const WALLET_REFUSALS: Partial<Record<ReasonCode, LoginErrorKey>> = {
  admin_contract_signature: "contractAdmin",
  siwe_not_eip4361: "wrongMessage",
  siwe_control_character: "wrongMessage",
  siwe_not_issued_here: "wrongMessage",
  siwe_wrong_purpose: "wrongMessage",
  siwe_no_issued_at: "clock",
  siwe_clock: "clock",
  signature_format: "badSignature",
  signature_malleable: "badSignature",
  signature_mismatch: "badSignature",
  needs_new_login: "needsLogin",
  wallet_link_expired: "linkExpired",
  wallet_link_contract: "contractLink",
  wallet_taken: "walletTaken",
};
/**
 * Refusals of the session itself when it asks /account to add a way in
 * (lib/accounts/sensitive-changes.ts): only signing in anew gets past them.
 */
const SESSION_REFUSALS: Partial<Record<ReasonCode, LoginErrorKey>> = {
  contract_session: "contractSession",
  login_not_recent: "loginNotRecent",
};

/** How /account words a refusal of the session asking to add a way in; undefined for any other refusal. */
export function sessionRefusal(why: Reason | undefined): { error: LoginErrorKey; restart: true } | undefined {
  const error = why && SESSION_REFUSALS[why.code];
  return error ? { error, restart: true } : undefined;
}

/** Refusals that only starting again can get past. */
const RESTART: ReadonlySet<LoginErrorKey> = new Set(["needsLogin", "linkExpired"]);

/** How a page words a wallet message's refusal: by its reason code, else `fallback`. */
export function walletRefusal(why: Reason | undefined, fallback: LoginErrorKey): { error: LoginErrorKey; restart?: true } {
  const error = (why && WALLET_REFUSALS[why.code]) ?? fallback;
  return RESTART.has(error) ? { error, restart: true } : { error };
}

const FINAL: ReadonlySet<string> = new Set<FinalRefusal>(["blocked", "walletTaken"]);
export const isFinal = (error: LoginErrorKey): error is FinalRefusal => FINAL.has(error);

/** Refusals that mean the login itself is over: the page then shows what happened and the ways on. */
export const loginIsOver = (result: LoginResult): boolean => result?.error === "expired" || result?.error === "elsewhere";
