import { ListSkeleton } from "@/components/admin/ui";

export default function Loading() {
  return <ListSkeleton label="Loading the accounts…" />;
}
