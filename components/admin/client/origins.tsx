/** The client page's allowed origins (CORS): browser pages that may call Keyfob for this client besides its redirect URIs' origins. */
import { addAllowedOriginAction, removeAllowedOriginAction } from "@/app/admin/_lib/actions";
import { Mono } from "@/components/admin/ui";
import { ValueListCard } from "@/components/admin/value-list";
import type { AdminClient } from "./types";

export function AllowedOrigins({ client }: { client: AdminClient }) {
  return (
    <ValueListCard
      id="allowed-origins"
      title="Browser applications (CORS)"
      description={
        <>
          Web pages on these origins may call the token, userinfo and revocation endpoints and Flow A for this client. The origins of its
          redirect URIs are always allowed; add others here (scheme, host and port, e.g. <Mono>https://app.example.com</Mono>).
        </>
      }
      clientId={client.id}
      field="origin"
      values={client.allowedOrigins.map(({ origin }) => origin)}
      empty="No extra origins: only pages on the redirect URIs' origins may call Keyfob from a browser."
      listLabel="Allowed origins"
      remove={{
        action: removeAllowedOriginAction,
        title: "Remove this origin?",
        consequence: "Browser requests from this origin are refused from now on.",
      }}
      add={{
        action: addAllowedOriginAction,
        formLabel: "Allow an origin",
        fieldLabel: "New allowed origin",
        placeholder: "https://app.example.com",
        button: "Allow origin",
      }}
    />
  );
}
