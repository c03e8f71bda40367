/**
 * What a login server action answers when it does not redirect: a key of the `loginErrors`
 * catalog (the page puts it into its language), whether only starting again helps, and how long
 * to wait (rate limits).
 */
import type { Messages } from "@/i18n/messages";

export type LoginErrorKey = keyof Messages["loginErrors"];
export type LoginResult = { error: LoginErrorKey; restart?: boolean; seconds?: number } | undefined;
