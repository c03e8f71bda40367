/** What the Tokens page's sections show: a page of active tokens or refresh grants, and whose they are. */
import type { AdminToken, LiveRefreshGrant, Page } from "@/lib/admin/operations";

export type ActiveToken = AdminToken;
export type RefreshGrant = LiveRefreshGrant;

/** The holder the page is filtered to (none: every token), as the revoke actions take it and in words. */
export type TokenHolder = {
  target: { clientId?: string; accountId?: string };
  /** "client … and account …", or "" when the page shows every holder's tokens. */
  scope: string;
  /** The filter could not be read: no list, and the empty states ask for a correction. */
  invalid: boolean;
  /** Only the holder's vehicle tokens are listed (kind=vehicle). */
  vehicleOnly: boolean;
};

export type TokenPage<T> = Page<T> & { href: (page: number) => string };
