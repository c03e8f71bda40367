/**
 * The user's side of the device authorization grant (RFC 8628 3.3): at /device the user enters the
 * code the device shows (or opens verification_uri_complete), sees which application asks, confirms
 * that the code is on their screen, and signs in through the hosted login, whose interaction
 * approves the device authorization (completeAuthorization) or, cancelled, denies it. Every entry of
 * a code counts against its address's limit first, and a wrong one against everyone's wrong codes
 * (lib/rate-limit.ts, across instances).
 */
import { createDeviceInteraction } from "../interactions/interactions";
import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { limitUserCodeEntry } from "../rate-limit";
import { describeUserAgent, type UserAgent } from "../sessions/user-agent";
import { formatUserCode, normalizeUserCode, userCodeDigest } from "./user-code";

/**
 * What /device shows to confirm a code: the code as shown on the device, the application asking, and
 * when, from which address and what kind of device it asked (the device as its User-Agent says,
 * which its maker chooses: only names the parser knows are shown, never the header itself).
 */
export type PendingDevice = {
  userCode: string;
  clientName: string;
  clientLogoUrl: string | null;
  requestedAt: Date;
  requestedFrom: string | null;
  requestedBy: UserAgent;
};

const unknownCode = () => invalidRequest({ code: "user_code_unknown" });

/**
 * What `find` makes of a typed code (by its canonical form and digest), under the user-code limits:
 * refused over them, or when `find` finds nothing. A code that could be a device's and is not is a
 * wrong code; one that cannot be (badly formed), or whose look-up failed, is not counted as one.
 */
async function entered<T>(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  typed: string,
  ip: string | undefined,
  find: (code: { canonical: string; digest: string }) => Promise<T | undefined>,
): Promise<T> {
  const entry = await limitUserCodeEntry(keyfob, ip);
  const canonical = normalizeUserCode(typed);
  let found: T | undefined;
  try {
    found = canonical ? await find({ canonical, digest: userCodeDigest(canonical) }) : undefined;
  } catch (error) {
    await entry.settle(false);
    throw error;
  }
  await entry.settle(canonical !== undefined && found === undefined);
  if (found === undefined) throw unknownCode();
  return found;
}

/** The application behind a pending user code, for the user to confirm; refused when the code is unknown, used or expired. */
export function lookUpUserCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  typed: string,
  ip: string | undefined,
): Promise<PendingDevice> {
  return entered(keyfob, typed, ip, async ({ canonical, digest }) => {
    const found = await keyfob.store.deviceAuthorizations.findByUserCode(digest, keyfob.clock.now());
    return (
      found && {
        userCode: formatUserCode(canonical),
        clientName: found.client.name,
        clientLogoUrl: found.client.logoUrl,
        requestedAt: found.createdAt,
        requestedFrom: found.requestIp,
        requestedBy: describeUserAgent(found.requestUserAgent),
      }
    );
  });
}

/**
 * Whether /device was opened from another site's page (a link, a form, a redirect through one): its
 * Sec-Fetch-Site says cross-site or same-site, or, from a browser that does not send it, its Referer
 * has another origin than the issuer's. The code in such a visit's URL was chosen by whoever made
 * that page, maybe someone phishing for a device grant: the person is asked to type the code their
 * device shows instead. Opened directly (a scanned QR code, a typed address: `none`) or from
 * Keyfob's own form (`same-origin`), the code in the URL is shown to confirm.
 */
export function openedFromAnotherSite(headers: { get(name: string): string | null }, issuerUrl: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site) return site !== "none" && site !== "same-origin";
  const referer = headers.get("referer");
  return referer !== null && URL.parse(referer)?.origin !== new URL(issuerUrl).origin;
}

/**
 * "Yes, this code is on my screen": uses the user code up and starts the hosted login that will
 * approve its device authorization; the interaction's id, for the login page.
 */
export function confirmUserCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  typed: string,
  context: { ip?: string; uiLocales?: string },
): Promise<string> {
  return entered(keyfob, typed, context.ip, ({ digest }) => createDeviceInteraction(keyfob, digest, context));
}

/**
 * "No, it is not on my screen": someone else's device asked; its authorization is denied
 * (access_denied at its next poll), audited with the account of the browser's session, if it has one.
 */
export async function declineUserCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  typed: string,
  context: { ip?: string; accountId?: string },
): Promise<void> {
  const clientId = await entered(keyfob, typed, context.ip, ({ digest }) =>
    keyfob.store.deviceAuthorizations.declineUserCode(digest, keyfob.clock.now()),
  );
  keyfob.audit.record({ action: "device.denied", outcome: "access_denied", clientId, ...context, detail: "declined at /device" });
}
