"use client";
/** When the login page itself fails (e.g. the database is unreachable): say so, in the page's language, and offer a retry. */
import { useTranslations } from "next-intl";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";

export default function LoginPageError() {
  const t = useTranslations("boundary");
  return (
    <AuthShell title={t("title")}>
      <Notice tone="error" title={t("noticeTitle")}>
        {t("notice")}
      </Notice>
      <div className="mt-6 flex justify-center">
        <button type="button" className={buttonStyles.primary} onClick={() => window.location.reload()}>
          {t("tryAgain")}
        </button>
      </div>
    </AuthShell>
  );
}
