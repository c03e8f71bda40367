/**
 * The client page's authentication: its secret (the default), or client assertions (RFC 7523):
 * private_key_jwt with its public keys (a JWK Set pasted here, or a jwks_uri Keyfob fetches; a
 * license's signers need neither), or client_secret_jwt (the secret rotated after choosing it).
 */
import { setClientAuthenticationAction } from "@/app/admin/_lib/actions";
import { ActionForm, Field, SubmitButton } from "@/components/admin/form";
import { button, Card, Mono } from "@/components/admin/ui";
import type { AdminClient } from "./types";

const METHODS = [
  ["", "Client secret (or none, for a public client)"],
  ["private_key_jwt", "private_key_jwt: assertions signed by the client's keys"],
  ["client_secret_jwt", "client_secret_jwt: assertions MACed with the client secret"],
] as const;

export function ClientAuthentication({ client }: { client: AdminClient }) {
  return (
    <Card
      id="authentication"
      title="Client authentication"
      description="How the client proves itself at the token, PAR, revocation, introspection and device endpoints. With an assertion method it may use nothing else."
    >
      <ActionForm
        action={setClientAuthenticationAction}
        fields={["tokenEndpointAuthMethod", "jwks", "jwksUri"]}
        hidden={{ clientId: client.id }}
        label="Client authentication"
      >
        <Field
          name="tokenEndpointAuthMethod"
          label="Method"
          options={METHODS}
          initialValue={client.tokenEndpointAuthMethod ?? ""}
          hint={
            <>
              For <Mono>client_secret_jwt</Mono>, generate the secret after choosing it: only a secret made for it is kept (encrypted) for
              the MAC.
            </>
          }
        />
        <Field
          name="jwksUri"
          label="JWK Set URI (jwks_uri)"
          optional
          initialValue={client.jwksUri ?? ""}
          type="url"
          autoComplete="off"
          spellCheck={false}
          hint="private_key_jwt: https on a public host; Keyfob fetches it, and again for an unknown kid."
        />
        <Field
          name="jwks"
          label="JWK Set"
          optional
          rows={4}
          initialValue={client.jwks ? JSON.stringify(client.jwks) : ""}
          hint="private_key_jwt: the public keys as JSON, instead of a URI. A license's signers sign without either."
        />
        <SubmitButton pendingLabel="Saving…" className={button.secondary}>
          Save authentication
        </SubmitButton>
      </ActionForm>
    </Card>
  );
}
