/**
 * "Continue with Google / Apple" (each only when configured), and "Continue as ..." for a browser
 * that is already signed in with Keyfob. Plain forms posting to server actions: they work before the
 * page's JavaScript has loaded, and show a pending state once it has.
 */
import { AppleIcon, GoogleIcon, WalletIcon } from "./icons";
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
            icon={provider === "google" ? <GoogleIcon /> : <AppleIcon className="size-5 text-black" />}
            pendingLabel={`Opening ${LABELS[provider]}…`}
          >
            Continue with {LABELS[provider]}
          </SubmitButton>
        </form>
      ))}
    </div>
  );
}

/** "Continue as ...": the browser is signed in with Keyfob, by a wallet, Google or Apple. */
export function ContinueAsSession({ label, connector, interactionId, action }: { label: string; connector: "web3" | "google" | "apple"; interactionId: string; action: FormAction }) {
  const icon = connector === "google" ? <GoogleIcon /> : connector === "apple" ? <AppleIcon className="size-5 text-black" /> : <WalletIcon className="size-5 text-indigo-700" />;
  return (
    <form action={action} className="rounded-xl border border-indigo-200 bg-indigo-50/60 p-3">
      <input type="hidden" name="interaction" value={interactionId} />
      <p className="mb-2 text-center text-xs font-medium text-indigo-900">
        You are signed in {connector === "web3" ? "with a wallet" : `with ${LABELS[connector]}`}
      </p>
      <SubmitButton className={buttonStyles.option} icon={icon} pendingLabel="Signing you in…">
        <span className="block max-w-[16rem] truncate">Continue as {label}</span>
      </SubmitButton>
    </form>
  );
}
