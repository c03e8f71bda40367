/**
 * /auth/error: where a Google/Apple login that did not complete lands (Auth.js's error page, and
 * /auth/callback's refusals). Messages come from a fixed list keyed by the query, never from the
 * query's text. When this browser started a login, it can try again or go back to the application.
 */
import type { Metadata } from "next";
import { SubmitButton } from "@/components/login/submit-button";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { cancelLogin } from "../actions";
import { rememberedLogin } from "../login-cookie";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign-in problem · Keyfob", robots: { index: false, follow: false } };

const REASONS: Record<string, { title: string; message: string }> = {
  browser: {
    title: "This sign-in was started elsewhere",
    message: "The sign-in you are finishing was not started in this browser, so Keyfob stopped it. Start again from the application.",
  },
  session: {
    title: "You are not signed in",
    message: "The sign-in with Google or Apple did not complete. Try again, or choose another way to sign in.",
  },
  expired: {
    title: "This sign-in has expired",
    message: "It took too long, or the sign-in was already used. Start again from the application.",
  },
  blocked: {
    title: "This account is blocked",
    message: "An administrator has blocked this account, so it cannot sign in. If you think this is a mistake, contact the application's support.",
  },
  unavailable: {
    title: "Keyfob could not finish signing you in",
    message: "Something on our side is not available right now. Please try again in a moment.",
  },
  // Auth.js error codes (https://authjs.dev/reference/core/errors).
  OAuthCallbackError: {
    title: "Sign-in with Google or Apple did not complete",
    message: "It was cancelled or the provider refused it. Try again, or choose another way to sign in.",
  },
  AccessDenied: { title: "Sign-in was refused", message: "The provider did not let you sign in. Try again, or choose another way to sign in." },
  Configuration: {
    title: "The sign-in provider is not available",
    message: "Keyfob could not complete the sign-in with Google or Apple. Try again later, or choose another way to sign in.",
  },
  Verification: { title: "This sign-in link is no longer valid", message: "Start again from the application." },
};
const FALLBACK = { title: "Sign-in did not complete", message: "Try again, or choose another way to sign in." };

export default async function AuthErrorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const key = [params.reason, params.error].find((value): value is string => typeof value === "string" && Object.hasOwn(REASONS, value));
  const { title, message } = key ? REASONS[key] : FALLBACK;
  const login = await rememberedLogin();
  return (
    <AuthShell title="Sign-in problem">
      <Notice tone="error" title={title}>
        {message}
      </Notice>
      {login && key !== "browser" && (
        <div className="mt-6 flex flex-col gap-3 sm:flex-row-reverse">
          {login.returnTo && (
            <a className={`${buttonStyles.primary} sm:flex-1`} href={login.returnTo}>
              Try again
            </a>
          )}
          <form action={cancelLogin} className="sm:flex-1">
            <input type="hidden" name="interaction" value={login.interactionId} />
            <SubmitButton className={`${buttonStyles.secondary} w-full`} pendingLabel="Returning…">
              Return to the application
            </SubmitButton>
          </form>
        </div>
      )}
    </AuthShell>
  );
}
