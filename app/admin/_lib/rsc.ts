/**
 * Sign-in routes must run in a real browser navigation: they set cookies and consume single-use
 * codes. Next.js reaches a same-origin URL through a React Server Components fetch on client-side
 * navigations, and even from the server when a server action redirects there (the hosted login's
 * wallet action redirects to /admin/callback). Such requests get a response that is not an RSC
 * payload and carries nothing, so the router falls back to a full page load of the same URL.
 */
export function isRscRequest(request: Request): boolean {
  return request.headers.get("rsc") === "1" || request.headers.has("next-router-prefetch");
}

export function fullPageLoadRequired(): Response {
  return new Response("Open this address with a full page load.", {
    status: 200,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", Vary: "RSC, Next-Router-Prefetch" },
  });
}
