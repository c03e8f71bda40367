/** The client page's settings: name, logo (previewed as the sign-in page shows it), resources, its tokens' signing alg, PKCE, resource server, refresh tokens, DPoP, management API and its scopes. */
import { updateClientAction } from "@/app/admin/_lib/actions";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/admin/form";
import { button, Card, Mono } from "@/components/admin/ui";
import { ClientLogo } from "@/components/login/client-logo";
import { MANAGEMENT_SCOPES } from "@/lib/admin/scopes";
import { CLIENT_OPTIONS } from "./flags";
import type { AdminClient } from "./types";

const SIGNING_ALG_OPTIONS = [
  ["RS256", "RS256 (default)"],
  ["PS256", "PS256 (RSA-PSS, FAPI 2.0)"],
  ["ES256", "ES256 (ECDSA P-256, FAPI 2.0)"],
] as const;

export function ClientSettings({ client }: { client: AdminClient }) {
  return (
    <Card
      id="settings"
      title="Settings"
      description="Changes apply to the next request; each one is written to the audit log with its old and new value. Enable or disable the client with the button at the top."
    >
      <ActionForm
        action={updateClientAction}
        fields={["name", "logoUrl", "resources", "idTokenSignedResponseAlg"]}
        hidden={{
          clientId: client.id,
          settings: [
            ...CLIENT_OPTIONS.map((option) => option.name),
            ...(client.confidential || client.managementApi ? ["managementApi", "managementScopes"] : []),
          ].join(" "),
        }}
        label="Client settings"
      >
        <div className="grid gap-4 sm:grid-cols-2">
          <Field name="name" label="Name" initialValue={client.name} autoComplete="off" />
          <div className="flex items-start gap-3">
            <Field
              name="logoUrl"
              label="Logo URL"
              optional
              initialValue={client.logoUrl ?? ""}
              type="url"
              autoComplete="off"
              spellCheck={false}
              hint="https only; shown on the sign-in page."
              className="min-w-0 flex-1"
            />
            <div className="flex shrink-0 flex-col items-center gap-1 pt-6" data-testid="logo-preview">
              {/* Keyed by the saved URL: a new logo gets a fresh try at loading. */}
              <ClientLogo key={client.logoUrl ?? ""} name={client.name} src={client.logoUrl} />
              <span className="text-xs text-slate-500">On sign-in</span>
            </div>
          </div>
          <Field
            name="resources"
            label="Resources"
            optional
            initialValue={client.resources.join(" ")}
            autoComplete="off"
            spellCheck={false}
            hint="The resource servers (APIs) it may get access tokens for, as absolute URIs separated by spaces: a token asked for one with the resource parameter (RFC 8707) has it as its audience."
            className="sm:col-span-2"
          />
        </div>
        <Field
          name="idTokenSignedResponseAlg"
          label="Token signing algorithm"
          initialValue={client.idTokenSignedResponseAlg}
          options={SIGNING_ALG_OPTIONS}
          hint={
            <>
              Signs its ID, access and logout tokens (<Mono>id_token_signed_response_alg</Mono>). Its library must expect the same alg; FAPI
              2.0 asks for PS256 or ES256.
            </>
          }
          className="sm:max-w-sm"
        />
        <fieldset className="space-y-3">
          <legend className="sr-only">Options</legend>
          {CLIENT_OPTIONS.map((option) => (
            <Checkbox
              key={option.name}
              name={option.name}
              label={option.label}
              defaultChecked={client[option.name]}
              hint={option.hint(client)}
            />
          ))}
          <Checkbox
            name="managementApi"
            label="Management API"
            defaultChecked={client.managementApi}
            disabled={!client.confidential && !client.managementApi}
            hint={
              client.confidential ? (
                <>
                  May get a token (client_credentials) for <Mono>/api/admin/v1</Mono> with the scopes below. Withdrawing it, or a scope,
                  stops its tokens at once.
                </>
              ) : (
                "Only a confidential client (with a secret) can be allowed the management API: generate a secret first."
              )
            }
          />
          {(client.confidential || client.managementApi) && (
            <fieldset className="ml-7 space-y-2">
              <legend className="mb-2 text-xs font-medium uppercase tracking-wider text-slate-600">Management API scopes</legend>
              {Object.entries(MANAGEMENT_SCOPES).map(([scope, meaning]) => (
                <Checkbox
                  key={scope}
                  name="managementScopes"
                  value={scope}
                  label={scope}
                  defaultChecked={client.managementScopes.includes(scope)}
                  hint={meaning}
                />
              ))}
            </fieldset>
          )}
        </fieldset>
        <SubmitButton pendingLabel="Saving…" className={button.secondary}>
          Save settings
        </SubmitButton>
      </ActionForm>
    </Card>
  );
}
