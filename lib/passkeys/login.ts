/**
 * Passkey logins on the hosted page: a verified passkey (returning user) or a new one (new user)
 * completes the interaction through completeAuthorization, as a wallet or Google/Apple login does,
 * with the identity { provider: "passkey", subject: <the account's user handle> }. A refusal is
 * kept in the audit log with its reason.
 */
import { completeAuthorization, findInteraction, type Completion } from "../interactions/interactions";
import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";
import { registerPasskey, verifyPasskeyLogin } from "./passkeys";

type Client = { ip?: string; userAgent?: string };

/** A returning user's passkey answer: on success, the code redirect (and the new session). */
export async function loginWithPasskey(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
  answer: unknown,
  client: Client = {},
): Promise<Completion> {
  const identity = await audited(keyfob, interactionId, client, "passkey", () => verifyPasskeyLogin(keyfob, interactionId, answer));
  return completeAuthorization(keyfob, interactionId, { identity, ...client });
}

/** A new user's new passkey: a new account, logged in at once. */
export async function signUpWithPasskey(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
  answer: unknown,
  client: Client = {},
): Promise<Completion> {
  const identity = await audited(keyfob, interactionId, client, "new passkey", () => registerPasskey(keyfob, interactionId, answer));
  const completion = await completeAuthorization(keyfob, interactionId, { identity, ...client });
  keyfob.audit.record({ action: "login.passkey_created", outcome: "success", ip: client.ip, detail: "a new account's first passkey" });
  return completion;
}

async function audited<T>(
  keyfob: Pick<Keyfob, "store" | "audit">,
  interactionId: string,
  client: Client,
  what: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof OAuthError && error.status < 500) {
      const interaction = await findInteraction(keyfob, interactionId).catch(() => undefined);
      keyfob.audit.record({
        action: "login.failed",
        outcome: error.code,
        clientId: interaction?.clientId,
        ip: client.ip,
        detail: `${what}: ${error.message}`,
      });
    }
    throw error;
  }
}
