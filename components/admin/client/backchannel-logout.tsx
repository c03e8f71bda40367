/** The client page's back-channel logout: where logout tokens go when a session it got tokens in ends, and whether it needs sid. */
import { updateClientAction } from "@/app/admin/_lib/actions";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/admin/form";
import { button, Card, Mono } from "@/components/admin/ui";
import type { AdminClient } from "./types";

export function BackchannelLogout({ client }: { client: AdminClient }) {
  return (
    <Card
      id="backchannel-logout"
      title="Back-channel logout"
      description="When a login session in which the client got tokens ends (logout, revocation, blocking, deletion), Keyfob POSTs a signed logout token to this URI, retrying for up to a day while it does not answer."
    >
      <ActionForm
        action={updateClientAction}
        fields={["backchannelLogoutUri"]}
        hidden={{ clientId: client.id, settings: "backchannelLogoutSessionRequired" }}
        label="Back-channel logout settings"
      >
        <Field
          name="backchannelLogoutUri"
          label="Back-channel logout URI"
          optional
          initialValue={client.backchannelLogoutUri ?? ""}
          type="url"
          autoComplete="off"
          spellCheck={false}
          hint="https on a public host (http and localhost only in development); empty: no back-channel logout."
        />
        <Checkbox
          name="backchannelLogoutSessionRequired"
          label="Session required"
          defaultChecked={client.backchannelLogoutSessionRequired}
          hint={
            <>
              The client needs <Mono>sid</Mono> in ID and logout tokens (Keyfob always sends it).
            </>
          }
        />
        <SubmitButton pendingLabel="Saving…" className={button.secondary}>
          Save back-channel logout
        </SubmitButton>
      </ActionForm>
    </Card>
  );
}
