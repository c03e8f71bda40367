import { RecordNotFound } from "@/components/admin/not-found";

export default function ClientNotFound() {
  return <RecordNotFound title="No such client" backHref="/admin/clients" backLabel="Back to the clients" />;
}
