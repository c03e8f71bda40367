/**
 * "Continue with Google / Apple" (each only when configured), and "Continue as ..." for a browser
 * that is already signed in with Keyfob. Plain forms posting to server actions: they work before the
 * page's JavaScript has loaded, and show a pending state once it has. Server components: their
 * words come from the page's locale (setRequestLocale).
 */
import { useTranslations } from "next-intl";
import type { Connector } from "@/lib/accounts/accounts";
import { AppleIcon, GoogleIcon, PasskeyIcon, WalletIcon } from "./icons";
import { SubmitButton } from "./submit-button";
import { buttonStyles } from "./ui";

type FormAction = (form: FormData) => Promise<void>;

export type UpstreamButtonsProps = {
  providers: ("google" | "apple")[];
  /** The login this sign-in completes (the hosted login page); none on /account. */
  interactionId?: string;
  returnTo?: string;
  loginHint?: string;
  action: FormAction;
};

const LABELS = { google: "Google", apple: "Apple" } as const;

export function UpstreamButtons({ providers, interactionId, returnTo, loginHint, action }: UpstreamButtonsProps) {
  const t = useTranslations("upstream");
  return (
    <div className="space-y-3">
      {providers.map((provider) => (
        <form key={provider} action={action}>
          <input type="hidden" name="provider" value={provider} />
          {interactionId && <input type="hidden" name="interaction" value={interactionId} />}
          {returnTo && <input type="hidden" name="returnTo" value={returnTo} />}
          {loginHint && <input type="hidden" name="loginHint" value={loginHint} />}
          <SubmitButton
            className={buttonStyles.option}
            icon={provider === "google" ? <GoogleIcon /> : <AppleIcon className="size-5 text-black dark:text-white" />}
            pendingLabel={t("opening", { provider: LABELS[provider] })}
          >
            {t("continueWith", { provider: LABELS[provider] })}
          </SubmitButton>
        </form>
      ))}
    </div>
  );
}

/** "Continue as ...": the browser is signed in with Keyfob, by a wallet, a passkey, Google or Apple. */
export function ContinueAsSession({
  label,
  connector,
  interactionId,
  action,
}: {
  label: string;
  connector: Connector;
  interactionId: string;
  action: FormAction;
}) {
  const t = useTranslations("upstream");
  const icon =
    connector === "google" ? (
      <GoogleIcon />
    ) : connector === "apple" ? (
      <AppleIcon className="size-5 text-black dark:text-white" />
    ) : connector === "passkey" ? (
      <PasskeyIcon className="size-5 text-indigo-700 dark:text-indigo-300" />
    ) : (
      <WalletIcon className="size-5 text-indigo-700 dark:text-indigo-300" />
    );
  const signedIn =
    connector === "web3"
      ? t("signedInWallet")
      : connector === "passkey"
        ? t("signedInPasskey")
        : t("signedInWith", { provider: LABELS[connector] });
  return (
    <form action={action} className="rounded-xl border border-indigo-200 bg-indigo-50/60 p-3 dark:border-indigo-800 dark:bg-indigo-950/60">
      <input type="hidden" name="interaction" value={interactionId} />
      <p className="mb-2 text-center text-xs font-medium text-indigo-900 dark:text-indigo-100">{signedIn}</p>
      <SubmitButton className={buttonStyles.option} icon={icon} pendingLabel={t("signingIn")}>
        <span className="block max-w-[16rem] truncate">{t("continueAs", { label })}</span>
      </SubmitButton>
    </form>
  );
}
