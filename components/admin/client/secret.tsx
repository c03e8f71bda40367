/** The client page's secret: whether the client is confidential, and generating a new secret (shown once). */
import { rotateSecretAction } from "@/app/admin/_lib/actions";
import { SecretRotation } from "@/components/admin/secret";
import { Card } from "@/components/admin/ui";
import type { AdminClient } from "./types";

export function ClientSecret({ client }: { client: AdminClient }) {
  return (
    <Card
      id="secret"
      title="Client secret"
      description={
        client.confidential
          ? "This client is confidential: it authenticates at the token endpoint with its secret. Keyfob stores only a hash."
          : "This client is public (PKCE, or Flow A signatures). Generate a secret to make it confidential."
      }
    >
      <SecretRotation action={rotateSecretAction} clientId={client.id} confidential={client.confidential} />
    </Card>
  );
}
