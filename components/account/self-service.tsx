/**
 * /account's lists for the signed-in person (lib/accounts/self-service.ts): ways in (wallets,
 * Google, Apple, passkeys) with rename, unlink and remove (unlink and remove only for a session
 * that may make them, lib/accounts/sensitive-changes.ts); login sessions with sign-out; the
 * applications allowed access, with revoke; deleting the account. Plain forms on server actions, which go back to /account with what happened.
 */
import type { ReactNode } from "react";
import { getFormatter, getTranslations } from "next-intl/server";
import { deleteAccount, renamePasskey, revokeApplicationAccess, signOutSession, unlinkWayIn } from "@/app/account/actions";
import { PASSKEY_NAME_MAX, type AccountOverview } from "@/lib/accounts/self-service";
import { EnsName, hasEnsName } from "../login/ens-name";
import { AppleIcon, GoogleIcon, PasskeyIcon, WalletIcon } from "../login/icons";
import { SubmitButton } from "../login/submit-button";
import { buttonStyles } from "../login/ui";

const item = "rounded-lg border border-slate-200 px-3 py-2.5 text-sm dark:border-slate-700";
const name = "font-medium text-slate-900 dark:text-slate-50";
const meta = "block text-xs text-slate-600 dark:text-slate-300";
const heading = "mt-8 text-sm font-semibold text-slate-900 dark:text-slate-50";
const help = "mb-3 mt-1 text-sm leading-relaxed text-slate-600 dark:text-slate-300";
const small = `${buttonStyles.secondary} min-h-9 px-3 py-1.5`;
/** The login pages' primary button in red: the one action here that cannot be undone. */
const danger = buttonStyles.primary
  .replace(/\b(hover:|active:)?bg-indigo-\d+/g, "")
  .concat(" bg-red-700 hover:bg-red-600 active:bg-red-800");

async function dateFormats() {
  const format = await getFormatter();
  return {
    day: (value: Date) => format.dateTime(value, { dateStyle: "medium", timeZone: "UTC" }),
    moment: (value: Date) => format.dateTime(value, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }),
  };
}

/** A row: what it is on the left, its actions on the right (below it at phone width). */
function Row({ icon, children, actions, testId }: { icon?: ReactNode; children: ReactNode; actions?: ReactNode; testId?: string }) {
  return (
    <li className={item} data-testid={testId}>
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
        {icon && <span className="shrink-0 text-slate-700 dark:text-slate-200">{icon}</span>}
        <div className="min-w-0 flex-1">{children}</div>
        {actions && <div className="flex flex-wrap gap-2">{actions}</div>}
      </div>
    </li>
  );
}

/** A row's one-button form: the row's identifiers as hidden fields, a visible verb, and for screen readers what it acts on. */
function RowAction(props: {
  action: (form: FormData) => Promise<void>;
  fields: Record<string, string>;
  verb: string;
  spoken: string;
  pending: string;
}) {
  return (
    <form action={props.action}>
      {Object.entries(props.fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <SubmitButton className={small} pendingLabel={props.pending}>
        <span aria-hidden="true">{props.verb}</span>
        <span className="sr-only">{props.spoken}</span>
      </SubmitButton>
    </form>
  );
}

export async function WaysIn({ overview, mayChange }: { overview: AccountOverview; mayChange: boolean }) {
  const t = await getTranslations("account");
  const { day, moment } = await dateFormats();
  const icons = { web3: <WalletIcon />, google: <GoogleIcon />, apple: <AppleIcon /> } as Record<string, ReactNode>;
  return (
    <>
      <h2 className={heading}>{t("identitiesTitle")}</h2>
      <p className={help}>{t("identitiesHelp")}</p>
      <ul className="mb-3 space-y-2" data-testid="identities">
        {overview.identities.map((identity) => {
          const kind = t(`kinds.${identity.provider as "web3"}`);
          const label = identity.email ?? identity.subject;
          return (
            <Row
              key={`${identity.provider}:${identity.subject}`}
              icon={icons[identity.provider]}
              testId="identity"
              actions={
                mayChange &&
                !identity.own && (
                  <RowAction
                    action={unlinkWayIn}
                    fields={{ provider: identity.provider, subject: identity.subject }}
                    verb={t("unlink")}
                    spoken={t("unlinkLabel", { name: `${kind} ${label}` })}
                    pending={t("unlinking")}
                  />
                )
              }
            >
              <span className={name}>{kind}</span>
              {hasEnsName(identity.ens) && (
                <span className={`${meta} text-slate-900 dark:text-slate-50`}>
                  <EnsName address={identity.subject} profile={identity.ens} />
                </span>
              )}
              <span className={`${meta} break-all ${identity.provider === "web3" ? "font-mono" : ""}`}>{label}</span>
              <span className={meta}>
                {identity.own ? `${t("ownWallet")} · ` : ""}
                {t("addedOn", { created: day(identity.createdAt) })} · {t("lastUsed", { used: moment(identity.lastLoginAt) })}
              </span>
            </Row>
          );
        })}
      </ul>

      <h2 className={heading}>{t("passkeysTitle")}</h2>
      <p className={help}>{t("passkeysHelp")}</p>
      {overview.passkeys.length === 0 ? (
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">{t("passkeysNone")}</p>
      ) : (
        <ul className="mb-3 space-y-2" data-testid="passkeys">
          {overview.passkeys.map((passkey) => {
            const label = passkey.name ?? t("passkeyItem", { created: day(passkey.createdAt) });
            return (
              <Row
                key={passkey.id}
                icon={<PasskeyIcon />}
                testId="passkey"
                actions={
                  mayChange && (
                    <RowAction
                      action={unlinkWayIn}
                      fields={{ passkey: passkey.id }}
                      verb={t("remove")}
                      spoken={t("removeLabel", { name: label })}
                      pending={t("removing")}
                    />
                  )
                }
              >
                <span className={`${name} break-words`}>{label}</span>
                <span className={meta}>
                  {passkey.name ? `${t("addedOn", { created: day(passkey.createdAt) })} · ` : ""}
                  {passkey.lastUsedAt ? t("passkeyLastUsed", { used: moment(passkey.lastUsedAt) }) : t("passkeyNeverUsed")} ·{" "}
                  {passkey.backedUp ? t("passkeySynced") : t("passkeyDevice")}
                </span>
                <details className="mt-2">
                  <summary className={`${buttonStyles.link} inline-block cursor-pointer`}>
                    <span aria-hidden="true">{t("rename")}</span>
                    <span className="sr-only">{t("renameLabel", { name: label })}</span>
                  </summary>
                  <form action={renamePasskey} className="mt-2 flex flex-wrap items-end gap-2">
                    <input type="hidden" name="passkey" value={passkey.id} />
                    <label className="min-w-0 flex-1 text-xs font-medium text-slate-700 dark:text-slate-200">
                      {t("passkeyName")}
                      <input
                        name="name"
                        required
                        maxLength={PASSKEY_NAME_MAX}
                        defaultValue={passkey.name ?? ""}
                        className="mt-1 block w-full min-w-40 rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-50"
                      />
                    </label>
                    <SubmitButton className={small} pendingLabel={t("saving")}>
                      {t("save")}
                    </SubmitButton>
                  </form>
                </details>
              </Row>
            );
          })}
        </ul>
      )}
    </>
  );
}

export async function Sessions({ currentSessionId, sessions }: { currentSessionId: string; sessions: AccountOverview["sessions"] }) {
  const t = await getTranslations("account");
  const { moment } = await dateFormats();
  return (
    <>
      <h2 className={heading}>{t("sessionsTitle")}</h2>
      <p className={help}>{t("sessionsHelp")}</p>
      <ul className="mb-3 space-y-2" data-testid="sessions">
        {sessions.map((session) => {
          const { browser, os } = session.agent;
          const device = browser && os ? t("device", { browser, os }) : (browser ?? os ?? t("unknownDevice"));
          const used = moment(session.lastSeenAt);
          return (
            <Row
              key={session.id}
              testId="session"
              actions={
                <RowAction
                  action={signOutSession}
                  fields={{ session: session.id }}
                  verb={t("signOutSession")}
                  spoken={t("signOutSessionLabel", { device, used })}
                  pending={t("signingOut")}
                />
              }
            >
              <span className={name}>
                {device}
                {session.id === currentSessionId && (
                  <span className="ml-2 rounded-full bg-indigo-50 px-2 py-0.5 text-xs font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-200">
                    {t("thisDevice")}
                  </span>
                )}
              </span>
              <span className={`${meta} break-all`}>{session.ip ? t("place", { ip: session.ip }) : t("unknownPlace")}</span>
              <span className={meta}>{t("sessionUsed", { used })}</span>
            </Row>
          );
        })}
      </ul>
      <form action={signOutSession}>
        <SubmitButton className={`${buttonStyles.secondary} w-full`} pendingLabel={t("signingOutEverywhere")}>
          {t("signOutEverywhere")}
        </SubmitButton>
      </form>
    </>
  );
}

/** The third-party applications the account allowed, what each may do, since when, with "Revoke". */
export async function Applications({ consents }: { consents: AccountOverview["consents"] }) {
  const t = await getTranslations("account");
  const scopes = await getTranslations("consent.scopes");
  const { day } = await dateFormats();
  return (
    <>
      <h2 className={heading}>{t("appsTitle")}</h2>
      <p className={help}>{t("appsHelp")}</p>
      <ul className="mb-3 space-y-2" data-testid="applications">
        {consents.map((consent) => (
          <Row
            key={consent.clientId}
            testId="application"
            actions={
              <RowAction
                action={revokeApplicationAccess}
                fields={{ client: consent.clientId }}
                verb={t("revoke")}
                spoken={t("revokeLabel", { client: consent.clientName })}
                pending={t("revoking")}
              />
            }
          >
            <span className={`${name} break-words`}>{consent.clientName}</span>
            <span className={meta}>{consent.scope.map((scope) => scopes(scope as "openid")).join(", ")}</span>
            <span className={meta}>{t("allowedOn", { date: day(consent.grantedAt) })}</span>
          </Row>
        ))}
      </ul>
    </>
  );
}

export async function DeleteAccount() {
  const t = await getTranslations("account");
  return (
    <section className="mt-8 rounded-xl border border-red-200 p-4 dark:border-red-900" aria-labelledby="delete-account">
      <h2 id="delete-account" className="text-sm font-semibold text-red-800 dark:text-red-200">
        {t("deleteTitle")}
      </h2>
      <p className={help}>{t("deleteHelp")}</p>
      <form action={deleteAccount} className="space-y-3">
        <label className="flex items-start gap-2 text-sm text-slate-800 dark:text-slate-100">
          <input type="checkbox" name="confirm" value="delete" required className="mt-1 size-4 shrink-0 accent-red-600" />
          <span>{t("deleteConfirm")}</span>
        </label>
        <SubmitButton className={`${danger} w-full`} pendingLabel={t("deleting")}>
          {t("deleteButton")}
        </SubmitButton>
      </form>
    </section>
  );
}
