/**
 * "Sign in again" on /account, where a change was refused for the session's login
 * (lib/accounts/sensitive-changes.ts): a new login on the hosted page, with max_age=0 so that it
 * offers no "Continue as" with the session this browser has (app/account/login/route.ts). A plain
 * link: the hosted login page loads whole.
 */
import { useTranslations } from "next-intl";
import { buttonStyles } from "../login/ui";

export function SignInAgain({ label = "signInAgain" }: { label?: "signInAgain" | "signInAnotherWay" }) {
  const t = useTranslations("account");
  return (
    <a href="/account/login?fresh=1" className={buttonStyles.primary}>
      {t(label)}
    </a>
  );
}
