/** The client page's foot: deleting the client, after typing its id. */
import { deleteClientAction } from "@/app/admin/_lib/actions";
import { DeleteCard } from "@/components/admin/delete-card";
import type { AdminClient } from "./types";

export function DeleteClient({ client }: { client: AdminClient }) {
  return (
    <DeleteCard
      title="Delete client"
      summary="Deletes the client with its redirect URIs, signers and issued-token records. This cannot be undone."
      action={deleteClientAction}
      fields={{ clientId: client.id }}
      question={`Delete ${client.name}?`}
      typeToConfirm={{ value: client.id, label: "the client ID" }}
    >
      The client, its redirect URIs, its signers and the records of its tokens are deleted. Applications using it stop working. This cannot
      be undone; to stop it temporarily, disable it instead.
    </DeleteCard>
  );
}
