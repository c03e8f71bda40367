import { RecordNotFound } from "@/components/admin/not-found";

export default function AccountNotFound() {
  return <RecordNotFound title="No such account" backHref="/admin/accounts" backLabel="Back to the accounts" />;
}
