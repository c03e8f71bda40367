/** /admin/clients/new: registers a client (a license address or any id, or a generated one). */
import type { Metadata } from "next";
import Link from "next/link";
import { ActionForm, Field, SubmitButton } from "@/components/admin/form";
import { button, Card, PageHeader } from "@/components/admin/ui";
import { createClientAction } from "../../../_lib/actions";
import { adminPage } from "../../../_lib/guard";

export const metadata: Metadata = { title: "New client" };

export default async function NewClientPage() {
  await adminPage();
  return (
    <div className="max-w-2xl">
      <PageHeader
        title="New client"
        breadcrumb={
          <Link href="/admin/clients" className="hover:underline">
            Clients
          </Link>
        }
        description="Redirect URIs, signers and a secret are added on the client's page once it exists."
      />
      <Card>
        <ActionForm action={createClientAction} fields={["id", "name", "logoUrl"]} label="New client">
          <Field
            name="id"
            label="Client ID"
            optional
            autoComplete="off"
            spellCheck={false}
            placeholder="0x… license address, or leave empty"
            hint="A developer license address (kept EIP-55 checksummed) or any id without spaces. Leave empty to generate one."
          />
          <Field name="name" label="Name" autoComplete="off" placeholder="Acme Fleet" hint="Shown to people on the sign-in page." />
          <Field name="logoUrl" label="Logo URL" optional type="url" autoComplete="off" placeholder="https://…" hint="An https URL." />
          <div className="flex flex-wrap gap-2 pt-2">
            <SubmitButton pendingLabel="Creating…">Create client</SubmitButton>
            <Link href="/admin/clients" className={button.secondary}>
              Cancel
            </Link>
          </div>
        </ActionForm>
      </Card>
    </div>
  );
}
