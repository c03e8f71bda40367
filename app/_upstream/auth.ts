/**
 * Auth.js (next-auth v5) for the upstream identity providers of the hosted login page: Google and
 * Apple, each enabled only when configured. Their issuers come from Keyfob's configuration, so
 * tests point them at a local OpenID provider. The session is a JWT cookie that keeps only who
 * logged in (provider, subject, email, email_verified); Keyfob's own accounts live in lib/.
 */
import NextAuth, { type NextAuthConfig } from "next-auth";
import Apple from "next-auth/providers/apple";
import Google from "next-auth/providers/google";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import type { Config } from "@/lib/config";
import { deriveKey } from "@/lib/keys/derive";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";

export type UpstreamId = "google" | "apple";

/** Apple's real issuer; any other issuer is a stand-in (tests), which needs `openid` in the scope. */
const APPLE_ISSUER = "https://appleid.apple.com";

/** Which upstream providers the login page offers. */
export function upstreamProviders(config: Config): UpstreamId[] {
  return [config.google && "google", config.apple && "apple"].filter(Boolean) as UpstreamId[];
}

function authConfig(): NextAuthConfig {
  const { config } = keyfob();
  if (!config.secret) throw new Error("KEYFOB_SECRET is not set");
  // Every URL Auth.js builds (callbacks, redirects) starts from ISSUER_URL, never from the Host or
  // X-Forwarded-Host headers of the request: next-auth reads its base URL from AUTH_URL only.
  process.env.AUTH_URL = `${config.issuerUrl}/api/auth`;
  const secure = config.issuerUrl.startsWith("https:");
  const providers: NextAuthConfig["providers"] = [];
  if (config.google) {
    const { clientId, clientSecret, issuer } = config.google;
    providers.push(Google({ clientId, clientSecret, issuer }));
  }
  if (config.apple) {
    const { clientId, clientSecret, issuer } = config.apple;
    const scope = issuer === APPLE_ISSUER ? "name email" : "openid name email";
    providers.push(Apple({ clientId, clientSecret, issuer, authorization: { params: { scope, response_mode: "form_post" } } }));
  }
  // Apple answers with a cross-site form POST: the cookies it must carry back cannot be SameSite=Lax.
  const crossSite = secure ? { options: { sameSite: "none" as const, secure: true } } : undefined;
  return {
    providers,
    // A key of its own, derived from KEYFOB_SECRET, never the secret itself.
    secret: Buffer.from(deriveKey(config.secret, "upstream-session")).toString("base64url"),
    // One line per problem in Keyfob's log format: no stack traces, no tokens.
    logger: {
      error: (error) => log.warn("upstream login failed", { error: (error as { type?: string }).type ?? error.name }),
      warn: (code) => log.warn("upstream login warning", { code }),
      debug: () => {},
    },
    session: { strategy: "jwt", maxAge: 24 * 60 * 60 },
    // Failed upstream logins (Auth.js sends "signIn"-kind errors to the sign-in page) land on our error page.
    pages: { error: "/auth/error", signIn: "/auth/error" },
    cookies: crossSite && { state: crossSite, nonce: crossSite, pkceCodeVerifier: crossSite, callbackUrl: crossSite },
    callbacks: {
      jwt({ token, account, profile }) {
        if (account && profile?.sub) {
          const upstream: UpstreamToken = {
            provider: account.provider as UpstreamId,
            subject: profile.sub,
            email: typeof profile.email === "string" ? profile.email : undefined,
            // Apple sends email_verified as the string "true".
            emailVerified: profile.email_verified === true || (profile.email_verified as unknown) === "true",
          };
          return { ...token, upstream };
        }
        return token;
      },
      session({ session, token }) {
        return { ...session, identity: (token as { upstream?: UpstreamToken }).upstream };
      },
    },
  };
}

type UpstreamToken = { provider: UpstreamId; subject: string; email?: string; emailVerified: boolean };

export const { handlers, auth, signIn, signOut } = NextAuth(() => authConfig());

/** The Google or Apple identity of the current browser session, if it has one. */
export async function sessionIdentity(): Promise<LoginIdentity | undefined> {
  const session = (await auth()) as { identity?: UpstreamToken } | null;
  const identity = session?.identity;
  if (!identity?.subject || (identity.provider !== "google" && identity.provider !== "apple")) return undefined;
  return { provider: identity.provider, subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified };
}
