"use client";
/**
 * "Add a passkey" on /account: a new passkey for the signed-in account (the browser's passkey
 * window), then the list refreshes. Refused for a login that is no longer recent, it offers "Sign
 * in again".
 */
import { useEffect, useRef, useState } from "react";
import { browserSupportsWebAuthn, startRegistration } from "@simplewebauthn/browser";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import type { AddPasskeyResult, AddPasskeyStart } from "@/app/account/actions";
import type { LoginErrorKey } from "../login/login-result";
import { PasskeyIcon, Spinner } from "../login/icons";
import { browserFailure } from "../login/passkey-login";
import { buttonStyles, Notice } from "../login/ui";
import { SignInAgain } from "./sign-in-again";

export function AddPasskey({
  start,
  finish,
}: {
  start: () => Promise<AddPasskeyStart>;
  finish: (answer: unknown) => Promise<AddPasskeyResult>;
}) {
  const t = useTranslations("account");
  const passkey = useTranslations("passkey");
  const errors = useTranslations("loginErrors");
  const common = useTranslations("common");
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{
    ok: boolean;
    title: string;
    message: string;
    restart?: boolean;
    signInAgain?: boolean;
  } | null>(null);
  const [supported, setSupported] = useState(true);
  const notice = useRef<HTMLDivElement>(null);
  useEffect(() => setSupported(browserSupportsWebAuthn()), []);
  useEffect(() => {
    if (result) notice.current?.focus();
  }, [result]);

  const add = async () => {
    if (busy) return;
    setBusy(true);
    setResult(null);
    const failed = (message: string, restart?: boolean, signInAgain?: boolean) =>
      setResult({ ok: false, title: t("addFailedTitle"), message, restart, signInAgain });
    const refused = (got: { error: LoginErrorKey; seconds?: number; restart?: boolean }) =>
      failed(errors(got.error, { seconds: got.seconds ?? 60 }), got.restart, got.error === "loginNotRecent");
    try {
      const got = await start();
      if ("error" in got) return refused(got);
      let answer: unknown;
      try {
        answer = await startRegistration({ optionsJSON: got.options });
      } catch (error) {
        const kind = browserFailure(error);
        return failed(
          kind === "exists"
            ? passkey("problems.exists")
            : kind === "cancelled"
              ? passkey("problems.cancelledCreate")
              : passkey("problems.browser"),
        );
      }
      const done = await finish(answer);
      if ("error" in done) return refused(done);
      setResult({ ok: true, title: t("addedTitle"), message: t("added") });
      router.refresh();
    } catch {
      failed(errors("unavailable"));
    } finally {
      setBusy(false);
    }
  };

  if (!supported) return <p className="text-sm text-slate-600 dark:text-slate-300">{passkey("unsupported")}</p>;
  return (
    <div className="space-y-3">
      <button type="button" className={`${buttonStyles.secondary} w-full`} onClick={() => void add()} disabled={busy}>
        {busy ? <Spinner className="size-4" /> : <PasskeyIcon className="size-4" />}
        <span>{t("addPasskey")}</span>
      </button>
      <div aria-live="polite" className="text-center text-sm text-slate-700 dark:text-slate-200">
        {busy ? t("adding") : ""}
      </div>
      {result && (
        <Notice
          ref={notice}
          tone={result.ok ? "info" : "error"}
          title={result.title}
          testId="add-passkey-result"
          actions={
            result.ok ? undefined : result.signInAgain ? (
              <SignInAgain />
            ) : result.restart ? (
              <button type="button" className={buttonStyles.primary} onClick={() => window.location.reload()}>
                {t("reload")}
              </button>
            ) : (
              <button type="button" className={buttonStyles.primary} onClick={() => void add()}>
                {common("tryAgain")}
              </button>
            )
          }
        >
          {result.message}
        </Notice>
      )}
    </div>
  );
}
