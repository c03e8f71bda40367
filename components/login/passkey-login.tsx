"use client";
/**
 * "Continue with a passkey" (a returning user: any of Keyfob's passkeys on this device or synced to
 * it) and "Create a passkey" (a new user: a new Keyfob account). The server hands out single-use
 * WebAuthn options, the browser asks the authenticator (@simplewebauthn/browser), and the server
 * action checks the answer and redirects to the application.
 */
import { useEffect, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import type { PasskeyCreationOptions, PasskeyRequestOptions } from "@/lib/passkeys/passkeys";
import { PasskeyIcon, Spinner } from "./icons";
import { isFinal, loginIsOver, type LoginErrorKey, type LoginResult } from "./login-result";
import { buttonStyles, LastUsedBadge, Notice } from "./ui";

export type PasskeyMode = "login" | "register";
export type PasskeyOptionsResult =
  | { mode: "login"; options: PasskeyRequestOptions }
  | { mode: "register"; options: PasskeyCreationOptions }
  | NonNullable<LoginResult>;

type Step = "idle" | PasskeyMode | "verifying" | "done";
type Problem = { title: string; message: string; restart?: boolean; final?: boolean; offerCreate?: boolean; mode: PasskeyMode };

/** What a WebAuthn failure in the browser means for the person. */
export function browserFailure(error: unknown): "cancelled" | "exists" | "other" {
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  if (name === "InvalidStateError" || code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED") return "exists";
  if (name === "NotAllowedError" || name === "AbortError" || code === "ERROR_CEREMONY_ABORTED") return "cancelled";
  return "other";
}

export function PasskeyLogin({
  interactionId,
  clientName,
  restartHref,
  getOptions,
  finish,
  lastUsed,
}: {
  interactionId: string;
  clientName: string;
  restartHref: string;
  /** Whether this browser signed in with a passkey last time: the button says so. */
  lastUsed?: boolean;
  getOptions: (interactionId: string, mode: PasskeyMode) => Promise<PasskeyOptionsResult>;
  finish: (interactionId: string, mode: PasskeyMode, answer: unknown) => Promise<LoginResult>;
}) {
  const t = useTranslations("passkey");
  const errors = useTranslations("loginErrors");
  const titles = useTranslations("loginErrorTitles");
  const common = useTranslations("common");
  const [step, setStep] = useState<Step>("idle");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [supported, setSupported] = useState(true);
  const notice = useRef<HTMLDivElement>(null);
  const busy = step !== "idle";

  // @simplewebauthn/browser's own check; the library itself is loaded on the first click (below).
  useEffect(() => setSupported(typeof window.PublicKeyCredential === "function"), []);
  useEffect(() => {
    if (problem) notice.current?.focus();
  }, [problem]);

  const router = useRouter();
  const serverProblem = (mode: PasskeyMode, result: NonNullable<LoginResult>): Problem => {
    // A login that is over: the page shows what happened and the ways on.
    if (loginIsOver(result)) router.refresh();
    const error = result.error as LoginErrorKey;
    return {
      mode,
      title: isFinal(error) ? titles(error) : t("problems.failedTitle"),
      message: errors(error, { seconds: result.seconds ?? 60 }),
      restart: result.restart,
      final: isFinal(error),
    };
  };

  const run = async (mode: PasskeyMode) => {
    if (busy) return;
    setProblem(null);
    setStep(mode);
    try {
      // Loaded while the server prepares the options, not with the page: 3.3 KB less gzipped
      // JavaScript before the login page is usable.
      const [got, webauthn] = await Promise.all([getOptions(interactionId, mode), import("@simplewebauthn/browser")]);
      if ("error" in got) return void setProblem(serverProblem(mode, got));
      let answer: unknown;
      try {
        answer =
          got.mode === "login"
            ? await webauthn.startAuthentication({ optionsJSON: got.options })
            : await webauthn.startRegistration({ optionsJSON: got.options });
      } catch (error) {
        const failure = browserFailure(error);
        if (failure === "cancelled") {
          return void setProblem(
            mode === "login"
              ? { mode, title: t("problems.cancelledTitle"), message: t("problems.cancelled"), offerCreate: true }
              : { mode, title: t("problems.cancelledCreateTitle"), message: t("problems.cancelledCreate") },
          );
        }
        if (failure === "exists")
          return void setProblem({ mode: "login", title: t("problems.existsTitle"), message: t("problems.exists") });
        return void setProblem({ mode, title: t("problems.browserTitle"), message: t("problems.browser") });
      }
      setStep("verifying");
      const result = await finish(interactionId, mode, answer);
      if (result?.error) return void setProblem(serverProblem(mode, result));
      setStep("done");
      return;
    } catch {
      setProblem({ mode, title: t("problems.failedTitle"), message: errors("unavailable") });
    } finally {
      setStep((current) => (current === "done" ? current : "idle"));
    }
  };

  const progress: Partial<Record<Step, string>> = {
    login: t("progress.login"),
    register: t("progress.register"),
    verifying: t("progress.verifying"),
    done: t("progress.done", { client: clientName }),
  };

  if (!supported) {
    return <p className="text-center text-xs text-slate-600 dark:text-slate-300">{t("unsupported")}</p>;
  }
  return (
    <div className="space-y-3">
      <button
        type="button"
        className={buttonStyles.option}
        onClick={() => void run("login")}
        disabled={busy}
        aria-describedby="passkey-help"
      >
        <span className="flex size-5 items-center justify-center text-slate-700 dark:text-slate-200">
          {busy ? <Spinner className="size-5" /> : <PasskeyIcon />}
        </span>
        <span>{t("continue")}</span>
        {lastUsed && <LastUsedBadge label={common("lastUsed")} />}
      </button>
      <p id="passkey-help" className="text-center text-xs leading-relaxed text-slate-600 dark:text-slate-300">
        {t("help")}{" "}
        {t.rich("newHere", {
          create: (chunks) => (
            <button type="button" className={`${buttonStyles.link} text-xs`} onClick={() => void run("register")} disabled={busy}>
              {chunks}
            </button>
          ),
        })}
      </p>
      <div aria-live="polite" className="sr-only">
        {busy ? progress[step] : ""}
      </div>
      {busy && (
        <p className="text-center text-sm text-slate-700 dark:text-slate-200" aria-hidden="true">
          {progress[step]}
        </p>
      )}
      {problem && (
        <Notice
          ref={notice}
          tone="error"
          title={problem.title}
          testId="passkey-problem"
          actions={
            problem.restart ? (
              <a className={buttonStyles.primary} href={restartHref}>
                {common("startAgain")}
              </a>
            ) : problem.final ? undefined : (
              <>
                <button type="button" className={buttonStyles.primary} onClick={() => void run(problem.mode)}>
                  {common("tryAgain")}
                </button>
                {problem.offerCreate && (
                  <button type="button" className={buttonStyles.secondary} onClick={() => void run("register")}>
                    {t("create")}
                  </button>
                )}
              </>
            )
          }
        >
          {problem.message}
        </Notice>
      )}
    </div>
  );
}
