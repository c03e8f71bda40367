/** /admin/signed-out: after POST /admin/logout. */
import type { Metadata } from "next";
import { button } from "@/components/admin/ui";

export const metadata: Metadata = { title: "Signed out", robots: { index: false, follow: false } };

export default async function SignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const everywhere = (await searchParams).everywhere === "1";
  return (
    <main className="flex min-h-dvh items-center justify-center px-4">
      <div className="w-full max-w-md rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200 sm:p-8">
        <h1 className="text-xl font-semibold tracking-tight text-slate-900">You have signed out</h1>
        <p className="mt-3 text-sm text-slate-600">
          {everywhere
            ? "Every dashboard session of your account has ended, in every browser."
            : "Your dashboard session has ended in this browser."}
        </p>
        <div className="mt-6">
          <a href="/admin/login" className={button.primary}>
            Sign in again
          </a>
        </div>
      </div>
    </main>
  );
}
