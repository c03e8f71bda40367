import { ListSkeleton } from "@/components/admin/ui";

export default function Loading() {
  return <ListSkeleton label="Loading admins…" rows={3} />;
}
