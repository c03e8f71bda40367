/**
 * Who is signed in on /account: the browser's live login session with Keyfob (any way in: wallet,
 * passkey, Google, Apple; a Google or Apple sign-in on this page starts one at /account/callback).
 * Checked on every page view and every action: a revoked or expired session, or a blocked account,
 * is signed out at once. Its login (amr, authTime) decides which changes it may make
 * (lib/accounts/sensitive-changes.ts).
 */
import type { Connector } from "@/lib/accounts/accounts";
import type { SessionLogin } from "@/lib/accounts/sensitive-changes";
import { currentLoginSession } from "../auth/session-cookie";

export type SignedIn = { accountId: string; provider: Connector; email?: string; sessionId: string; login: SessionLogin };

export async function signedInAccount(): Promise<SignedIn | undefined> {
  const session = await currentLoginSession();
  return (
    session && {
      accountId: session.accountId,
      provider: session.identity.provider,
      email: session.identity.email,
      sessionId: session.id,
      login: { amr: session.amr, authTime: session.authTime },
    }
  );
}
