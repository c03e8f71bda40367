import { Skeleton } from "@/components/admin/ui";

export default function Loading() {
  return (
    <div role="status" aria-live="polite" aria-busy="true">
      <span className="sr-only">Loading the client…</span>
      <Skeleton className="mb-2 h-4 w-20" />
      <Skeleton className="mb-6 h-8 w-64 max-w-full" />
      <div className="grid gap-6">
        {[0, 1, 2].map((i) => (
          <Skeleton key={i} className="h-40" />
        ))}
      </div>
    </div>
  );
}
