"use client";
/** When the login page itself fails (e.g. the database is unreachable): say so and offer a retry. */
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";

export default function LoginPageError() {
  return (
    <AuthShell title="Sign-in is unavailable">
      <Notice tone="error" title="Keyfob could not load this page">
        Something on our side is not working right now. Please try again in a moment.
      </Notice>
      <div className="mt-6 flex justify-center">
        <button type="button" className={buttonStyles.primary} onClick={() => window.location.reload()}>
          Try again
        </button>
      </div>
    </AuthShell>
  );
}
