/**
 * The user's side of the device authorization grant (RFC 8628 3.3): at /device the user enters the
 * code the device shows (or opens verification_uri_complete), sees which application asks, confirms
 * that the code is on their screen, and signs in through the hosted login, whose interaction
 * approves the device authorization (completeAuthorization) or, cancelled, denies it. Every entry of
 * a code counts against the user-code limits (per address and overall, across instances) first.
 */
import { createDeviceInteraction } from "../interactions/interactions";
import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { limitUserCodeEntry } from "../rate-limit";
import { formatUserCode, normalizeUserCode, userCodeDigest } from "./user-code";

/** What /device shows to confirm a code: the code as shown on the device, and the application asking. */
export type PendingDevice = { userCode: string; clientName: string; clientLogoUrl: string | null };

const unknownCode = () => invalidRequest({ code: "user_code_unknown" });

/** A typed code's canonical form and digest, after it was counted; refused when it cannot be one of ours. */
async function countedCode(keyfob: Keyfob, typed: string, ip: string | undefined) {
  await limitUserCodeEntry(keyfob, ip);
  const canonical = normalizeUserCode(typed);
  if (!canonical) throw unknownCode();
  return { canonical, digest: userCodeDigest(canonical) };
}

/** The application behind a pending user code, for the user to confirm; refused when the code is unknown, used or expired. */
export async function lookUpUserCode(keyfob: Keyfob, typed: string, ip: string | undefined): Promise<PendingDevice> {
  const { canonical, digest } = await countedCode(keyfob, typed, ip);
  const found = await keyfob.store.codes.findDeviceByUserCode(digest, new Date());
  if (!found) throw unknownCode();
  return { userCode: formatUserCode(canonical), clientName: found.client.name, clientLogoUrl: found.client.logoUrl };
}

/**
 * "Yes, this code is on my screen": uses the user code up and starts the hosted login that will
 * approve its device authorization; the interaction's id, for the login page.
 */
export async function confirmUserCode(keyfob: Keyfob, typed: string, context: { ip?: string; uiLocales?: string }): Promise<string> {
  const { digest } = await countedCode(keyfob, typed, context.ip);
  const interactionId = await createDeviceInteraction(keyfob, digest, context);
  if (!interactionId) throw unknownCode();
  return interactionId;
}

/**
 * "No, it is not on my screen": someone else's device asked; its authorization is denied
 * (access_denied at its next poll), audited with the account of the browser's session, if it has one.
 */
export async function declineUserCode(keyfob: Keyfob, typed: string, context: { ip?: string; accountId?: string }): Promise<void> {
  const { digest } = await countedCode(keyfob, typed, context.ip);
  const clientId = await keyfob.store.codes.declineUserCode(digest, new Date());
  if (!clientId) throw unknownCode();
  keyfob.audit.record({ action: "device.denied", outcome: "access_denied", clientId, ...context, detail: "declined at /device" });
}
