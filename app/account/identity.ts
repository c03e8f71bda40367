/**
 * Who is signed in on /account: a Google or Apple sign-in made on this page (Auth.js), or else the
 * browser's login session with Keyfob (any way in: wallet, passkey, Google, Apple), so that people
 * without Google or Apple can manage their account too.
 */
import type { Connector } from "@/lib/accounts/accounts";
import { resolveAccount } from "@/lib/accounts/accounts";
import { keyfob } from "@/lib/runtime";
import { sessionIdentity } from "../_upstream/auth";
import { currentLoginSession } from "../auth/session-cookie";

export type SignedIn = { accountId: string; provider: Connector; email?: string; via: "upstream" | "session" };

export async function signedInAccount(): Promise<SignedIn | undefined> {
  const upstream = await sessionIdentity();
  if (upstream) return { accountId: await resolveAccount(keyfob(), upstream), provider: upstream.provider, email: upstream.email, via: "upstream" };
  const session = await currentLoginSession();
  if (session) return { accountId: session.accountId, provider: session.identity.provider, email: session.identity.email, via: "session" };
  return undefined;
}
