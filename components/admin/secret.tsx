"use client";
/**
 * Generates or rotates a client's secret. It is confirmed first (a new secret replaces the old one,
 * at once or after a chosen overlap, and makes a public client confidential), then shown once with
 * a copy button: Keyfob keeps only its hash, and the value lives only in this component's state.
 */
import { useActionState, useEffect, useId, useState } from "react";
import { CopyButton } from "./copy-button";
import { Dialog, DialogButtons } from "./confirm";
import { capitalise, SubmitButton } from "./form";
import type { FormAction } from "./form-state";
import { button, inputClass } from "./ui";

/** How long the replaced secret may stay valid, in seconds (a rotation's overlap). */
const OVERLAPS = [
  { seconds: 0, label: "No overlap: it stops at once" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "1 day" },
  { seconds: 7 * 86400, label: "7 days" },
  { seconds: 30 * 86400, label: "30 days" },
];

export function SecretRotation({ action, clientId, confidential }: { action: FormAction; clientId: string; confidential: boolean }) {
  const [state, formAction] = useActionState(action, {});
  const [open, setOpen] = useState(false);
  const [secret, setSecret] = useState<string | undefined>();
  const overlapId = useId();
  useEffect(() => {
    if (state.ok && state.secret) setSecret(state.secret);
  }, [state]);
  const verb = confidential ? "Rotate secret" : "Generate secret";

  return (
    <div className="space-y-4">
      {secret ? (
        <div role="status" className="rounded-lg border border-amber-300 bg-amber-50 p-4">
          <p className="font-semibold text-amber-950">Copy the new client secret now</p>
          <p className="mt-1 text-sm text-amber-950">
            It is shown only this once: Keyfob stores only a hash of it. The client authenticates with it at the token endpoint (HTTP Basic
            or client_secret_post). If it is lost, rotate the secret again.
          </p>
          <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
            <label htmlFor="new-client-secret" className="sr-only">
              New client secret
            </label>
            <input
              id="new-client-secret"
              readOnly
              value={secret}
              onFocus={(event) => event.currentTarget.select()}
              className="min-h-10 w-full min-w-0 flex-1 rounded-lg border border-amber-300 bg-white px-3 py-2 font-mono text-sm text-slate-900"
            />
            <CopyButton value={secret} className={button.secondary} label="Copy secret" />
          </div>
          <button type="button" className={`${button.small} mt-3`} onClick={() => setSecret(undefined)}>
            I have stored it: hide the secret
          </button>
        </div>
      ) : (
        <button
          type="button"
          className={confidential ? button.dangerOutline : button.secondary}
          aria-haspopup="dialog"
          onClick={() => setOpen(true)}
        >
          {verb}
        </button>
      )}
      <Dialog
        open={open}
        onClose={() => setOpen(false)}
        title={confidential ? "Rotate the client secret?" : "Generate a client secret?"}
        closeWhen={state.ok ? state.at : undefined}
      >
        <form action={formAction}>
          <input type="hidden" name="clientId" value={clientId} />
          <p className="text-sm leading-relaxed text-slate-700">
            {confidential
              ? "Without an overlap the current secret stops working immediately: every application using it fails to get tokens until it has the new one. With one, both work until the overlap ends, which you can end early."
              : "The client becomes confidential: from now on it must send this secret to the token endpoint. Applications using it as a public client (PKCE only) stop working until they do."}{" "}
            The new secret is shown once.
          </p>
          {confidential && (
            <div className="mt-4">
              <label htmlFor={overlapId} className="mb-1 block text-sm font-medium text-slate-800">
                The current secret keeps working for
              </label>
              <select id={overlapId} name="overlapSeconds" defaultValue="86400" className={inputClass}>
                {OVERLAPS.map((overlap) => (
                  <option key={overlap.seconds} value={overlap.seconds}>
                    {overlap.label}
                  </option>
                ))}
              </select>
            </div>
          )}
          {!state.ok && state.error && (
            <p role="alert" className="mt-4 rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
              {capitalise(state.error)}
            </p>
          )}
          <DialogButtons
            onCancel={() => setOpen(false)}
            confirm={
              <SubmitButton className={confidential ? button.danger : button.primary} pendingLabel="Generating…">
                {verb}
              </SubmitButton>
            }
          />
        </form>
      </Dialog>
    </div>
  );
}
