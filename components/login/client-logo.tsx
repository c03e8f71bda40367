"use client";
/**
 * The application's logo, at a fixed size (56 px, kept whole: object-contain), only from an https
 * URL; its initial on a tinted tile when there is none, or it does not load.
 */
import { useEffect, useRef, useState } from "react";
import { isHttpsUrl } from "./https-url";

export function ClientLogo({ name, src }: { name: string; src?: string | null }) {
  const [failed, setFailed] = useState(false);
  const image = useRef<HTMLImageElement>(null);
  useEffect(() => {
    // It may have failed before this page's script ran (no onError then).
    const img = image.current;
    if (img?.complete && img.naturalWidth === 0) setFailed(true);
  }, []);
  if (isHttpsUrl(src) && !failed) {
    return (
      // biome-ignore lint/performance/noImgElement: a client's https logo, any host: not for next/image
      <img
        ref={image}
        src={src}
        alt=""
        width={56}
        height={56}
        referrerPolicy="no-referrer"
        decoding="async"
        onError={() => setFailed(true)}
        data-testid="client-logo"
        className="size-14 shrink-0 rounded-2xl bg-white object-contain p-1 shadow-sm ring-1 ring-slate-200 dark:ring-slate-700"
      />
    );
  }
  const initial = Array.from(name.trim())[0]?.toUpperCase() ?? "?";
  return (
    <span
      aria-hidden="true"
      data-testid="client-logo-fallback"
      className="grid size-14 shrink-0 place-items-center rounded-2xl bg-indigo-100 text-2xl font-semibold text-indigo-800 shadow-sm ring-1 ring-indigo-200 dark:bg-indigo-950 dark:text-indigo-200 dark:ring-indigo-800"
    >
      {initial}
    </span>
  );
}
