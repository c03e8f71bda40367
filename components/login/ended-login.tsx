/**
 * The login page of a sign-in that is over (cancelled, completed, expired, or started in another
 * browser): what happened, and the ways on that /auth/error offers too: start the same request
 * again, and return to the application when the login knows its registered redirect URI and no
 * code went there yet. A server component: its words come from the page's locale.
 */
import { useTranslations } from "next-intl";
import type { InteractionEnd } from "@/lib/interactions/interactions";
import { SubmitButton } from "./submit-button";
import { AuthShell, buttonStyles, Notice } from "./ui";

export type EndedLoginProps = {
  lang: string;
  /** How it ended; "elsewhere" when this browser did not start it, "unknown" when Keyfob no longer knows it. */
  end: InteractionEnd | "elsewhere" | "unknown";
  ended?: { id: string; clientName: string; restartUrl: string; mayReturn: boolean };
  leave: (form: FormData) => Promise<void>;
};

const NOTICES = {
  cancelled: ["cancelledTitle", "cancelled"],
  signed_in: ["signedInTitle", "signedIn"],
  expired: ["expiredTitle", "expired"],
  elsewhere: ["startedElsewhereTitle", "startedElsewhere"],
  unknown: ["unknownTitle", "unknown"],
} as const;

export function EndedLogin({ lang, end, ended, leave }: EndedLoginProps) {
  const t = useTranslations("login");
  const common = useTranslations("common");
  const [title, message] = NOTICES[end];
  const client = ended?.clientName ?? "";
  return (
    <AuthShell title={t("endedTitle")} lang={lang}>
      <Notice tone={end === "signed_in" || end === "cancelled" ? "info" : "error"} title={t(title)}>
        {t(message, { client })}
      </Notice>
      {ended && (
        <div className="mt-6 flex flex-col gap-3 sm:flex-row-reverse">
          <a className={`${buttonStyles.primary} sm:flex-1`} href={ended.restartUrl}>
            {common("startAgain")}
          </a>
          {ended.mayReturn && (
            <form action={leave} className="sm:flex-1">
              <input type="hidden" name="interaction" value={ended.id} />
              <SubmitButton className={`${buttonStyles.secondary} w-full`} pendingLabel={common("returning")}>
                {t("returnTo", { client })}
              </SubmitButton>
            </form>
          )}
        </div>
      )}
    </AuthShell>
  );
}
