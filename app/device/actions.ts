"use server";
/**
 * Server actions of /device: the answer to "Is this code on your screen?". Each parses its input,
 * calls lib/device, and redirects (to the hosted login, or the end page); a refused code goes back
 * to the entry form with its reason.
 */
import { redirect } from "next/navigation";
import { confirmUserCode, declineUserCode } from "@/lib/device/verification";
import { deviceEnd } from "@/lib/interactions/interactions";
import { toOAuthError } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";
import { bindInteraction } from "../auth/login-cookie";
import { currentLoginSession, loginClient } from "../auth/session-cookie";

const field = (form: FormData, name: string) => {
  const value = form instanceof FormData ? form.get(name) : null;
  return typeof value === "string" ? value.slice(0, 64) : "";
};

/** Back to the entry form, the code kept, saying why it was refused. */
const refused = (code: string, caught: unknown): never => {
  const error = toOAuthError(caught);
  const why = error.status === 429 ? "too_many" : error.status >= 500 ? "unavailable" : "unknown";
  redirect(`/device?${new URLSearchParams({ user_code: code, error: why })}`);
};

/** "Yes, continue to sign in": uses the code up and opens the hosted login, bound to this browser. */
export async function confirmCode(form: FormData): Promise<void> {
  const code = field(form, "user_code");
  let interactionId: string;
  try {
    interactionId = await confirmUserCode(keyfob(), code, { ip: (await loginClient()).ip, uiLocales: field(form, "locale") || undefined });
  } catch (caught) {
    refused(code, caught);
    return;
  }
  await bindInteraction(interactionId);
  redirect(`/auth/interaction/${interactionId}`);
}

/** "No, it is not on my screen": the device is refused. */
export async function declineCode(form: FormData): Promise<void> {
  const code = field(form, "user_code");
  try {
    const { ip } = await loginClient();
    await declineUserCode(keyfob(), code, { ip, accountId: (await currentLoginSession())?.accountId });
  } catch (caught) {
    refused(code, caught);
  }
  redirect(deviceEnd("denied"));
}
