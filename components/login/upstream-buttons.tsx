/**
 * "Continue with Google / Apple" (each only when configured), and "Continue as ..." for a browser
 * that is already signed in with Keyfob. Plain forms posting to server actions: they work before the
 * page's JavaScript has loaded, and show a pending state once it has. Server components: their
 * words come from the page's locale (setRequestLocale).
 */
import { useTranslations } from "next-intl";
import type { Connector } from "@/lib/accounts/accounts";
import { EnsAvatar, type EnsNamed } from "./ens-name";
import { AppleIcon, GoogleIcon, PasskeyIcon, WalletIcon } from "./icons";
import { SubmitButton } from "./submit-button";
import { buttonStyles, LastUsedBadge } from "./ui";

type FormAction = (form: FormData) => Promise<void>;

export type UpstreamButtonsProps = {
  providers: ("google" | "apple")[];
  /** How this browser signed in last time: that button says so. */
  lastUsed?: Connector;
  /** The login this sign-in completes (the hosted login page); none on /account. */
  interactionId?: string;
  returnTo?: string;
  loginHint?: string;
  action: FormAction;
};

const LABELS = { google: "Google", apple: "Apple" } as const;

export function UpstreamButtons({ providers, lastUsed, interactionId, returnTo, loginHint, action }: UpstreamButtonsProps) {
  const t = useTranslations("upstream");
  const common = useTranslations("common");
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
            badge={lastUsed === provider && <LastUsedBadge label={common("lastUsed")} />}
          >
            {t("continueWith", { provider: LABELS[provider] })}
          </SubmitButton>
        </form>
      ))}
    </div>
  );
}

/**
 * "Continue as ...": the browser is signed in with Keyfob, by a wallet, a passkey, Google or Apple.
 * The whole identity shows (wrapped on a phone); "Not you?" ends that session and shows the same
 * login's choices.
 */
export function ContinueAsSession({
  label,
  ens,
  connector,
  interactionId,
  action,
  signOut,
}: {
  /** The email address, or the account's address. */
  label: string;
  /** The account address's ENS name and avatar, shown in its place (the address stays in the title). */
  ens?: EnsNamed;
  connector: Connector;
  interactionId: string;
  action: FormAction;
  signOut: FormAction;
}) {
  const t = useTranslations("upstream");
  const icon =
    connector === "google" ? (
      <GoogleIcon />
    ) : connector === "apple" ? (
      <AppleIcon className="size-5 text-black dark:text-white" />
    ) : connector === "passkey" ? (
      <PasskeyIcon className="size-5 text-indigo-700 dark:text-indigo-300" />
    ) : ens?.avatar ? (
      <EnsAvatar avatar={ens.avatar} />
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
    <div className="rounded-xl border border-indigo-200 bg-indigo-50/60 p-3 dark:border-indigo-800 dark:bg-indigo-950/60">
      <p className="mb-2 text-center text-xs font-medium text-indigo-900 dark:text-indigo-100">{signedIn}</p>
      <form action={action}>
        <input type="hidden" name="interaction" value={interactionId} />
        <SubmitButton className={buttonStyles.option} icon={icon} pendingLabel={t("signingIn")}>
          <span className="block [overflow-wrap:anywhere]" title={label} data-testid="continue-as-label">
            {t("continueAs", { label: ens?.name ?? label })}
          </span>
        </SubmitButton>
      </form>
      <form action={signOut} className="mt-2 text-center">
        <input type="hidden" name="interaction" value={interactionId} />
        <SubmitButton className={buttonStyles.quiet} pendingLabel={t("signingOut")}>
          {t("notYou")}
        </SubmitButton>
      </form>
    </div>
  );
}
