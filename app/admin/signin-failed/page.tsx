/** /admin/signin-failed?reason=…: an admin sign-in that did not complete, and how to try again. */
import type { Metadata } from "next";
import Link from "next/link";
import { button } from "@/components/admin/ui";

export const metadata: Metadata = { title: "Sign-in failed", robots: { index: false, follow: false } };

const reasons: Record<string, string> = {
  cancelled: "The sign-in was cancelled.",
  refused: "The sign-in page refused the request.",
  browser: "This browser did not start this sign-in, or it took longer than 10 minutes. Cookies must be enabled for this site.",
  expired: "The sign-in code was invalid or had expired, or the sign-in did not start with a new login.",
  contract:
    "Smart-account (contract) signatures are not accepted for the dashboard here. Sign in with a wallet's own key, a passkey, Google or Apple.",
  unavailable: "Keyfob could not complete the sign-in just now (a dependency is unavailable).",
};

export default async function SignInFailedPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const reason = (await searchParams).reason;
  const message = reasons[typeof reason === "string" ? reason : ""] ?? "The sign-in did not complete.";
  return (
    <main className="flex min-h-dvh items-center justify-center px-4">
      <div className="w-full max-w-md rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200 sm:p-8">
        <h1 className="text-xl font-semibold tracking-tight text-slate-900">Sign-in to the dashboard failed</h1>
        <p role="alert" className="mt-3 text-sm text-slate-700">
          {message}
        </p>
        <p className="mt-2 text-sm text-slate-600">You are not signed in. Start again to get a fresh sign-in link.</p>
        <div className="mt-6 flex flex-wrap gap-2">
          <a href="/admin/login" className={button.primary}>
            Sign in again
          </a>
          <Link href="/" className={button.secondary}>
            Keyfob home
          </Link>
        </div>
      </div>
    </main>
  );
}
