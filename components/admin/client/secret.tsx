/**
 * The client page's secret: whether the client is confidential, generating a new secret (shown
 * once), and a rotation's overlap (the replaced secret still valid until its end), ended early on demand.
 */
import { endSecretOverlapAction, rotateSecretAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { SecretRotation } from "@/components/admin/secret";
import { button, Card, DateText } from "@/components/admin/ui";
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
      {client.secretOverlapEndsAt && (
        <div className="mb-4 flex flex-col gap-2 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 sm:flex-row sm:items-center sm:justify-between">
          <p>
            Overlap: the previous secret also works until <DateText date={client.secretOverlapEndsAt} />.
          </p>
          <ConfirmAction
            action={endSecretOverlapAction}
            fields={{ clientId: client.id }}
            trigger="End overlap now"
            triggerClassName={button.dangerOutline}
            title="End the overlap now?"
            confirmLabel="End overlap"
            pendingLabel="Ending…"
          >
            The previous secret stops working at once: applications still using it fail to get tokens until they have the new one.
          </ConfirmAction>
        </div>
      )}
      <SecretRotation action={rotateSecretAction} clientId={client.id} confidential={client.confidential} />
    </Card>
  );
}
