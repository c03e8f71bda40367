/**
 * A small self-contained HTML page (inline styles, no JavaScript) for answers that route handlers
 * must give with a real HTTP status: the authorization endpoint's refusals (400, 429), the logout
 * pages and the dashboard's 403. Every piece of text is escaped here. Light or dark after the
 * browser's prefers-color-scheme; `lang` is the language the caller wrote it in.
 */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export type HtmlPage = {
  status: number;
  /** The page's language (BCP 47); English when not given. */
  lang?: string;
  /** The small line above the heading, e.g. "403 · Access denied". */
  eyebrow: string;
  title: string;
  heading: string;
  /** Paragraphs of plain text; `code` parts are shown in a monospace font. */
  paragraphs: (string | { before: string; code: string; after?: string })[];
  /** Raw HTML of the action buttons (already escaped by the caller), if any. */
  actions?: string;
  headers?: Record<string, string>;
};

export function htmlPage(page: HtmlPage): Response {
  const paragraph = (p: HtmlPage["paragraphs"][number]) =>
    typeof p === "string"
      ? `<p>${escapeHtml(p)}</p>`
      : `<p>${escapeHtml(p.before)} <code>${escapeHtml(p.code)}</code>${escapeHtml(p.after ?? "")}</p>`;
  const html = `<!doctype html>
<html lang="${escapeHtml(page.lang ?? "en")}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(page.title)} · Keyfob</title>
<style>
  body { margin: 0; min-height: 100dvh; display: grid; place-items: center; background: #f8fafc; color: #0f172a;
         font: 16px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", sans-serif; }
  main { box-sizing: border-box; width: calc(100% - 2rem); max-width: 28rem; padding: 2rem; background: #fff;
         border-radius: 1rem; box-shadow: 0 1px 2px rgb(0 0 0 / .05); outline: 1px solid #e2e8f0; }
  .eyebrow { margin: 0 0 .25rem; font-size: .75rem; font-weight: 600; letter-spacing: .06em; text-transform: uppercase; color: #b91c1c; }
  h1 { margin: 0 0 .5rem; font-size: 1.375rem; letter-spacing: -.01em; }
  p { margin: 0 0 1rem; color: #475569; font-size: .9375rem; }
  code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; color: #0f172a; word-break: break-all; }
  .actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1.5rem; }
  button, a.button { box-sizing: border-box; display: inline-flex; align-items: center; min-height: 2.5rem; padding: 0 1rem;
         border-radius: .5rem; font-family: inherit; font-size: .875rem; font-weight: 600; line-height: 1; cursor: pointer;
         text-decoration: none; }
  button { background: #4f46e5; color: #fff; border: 0; }
  a.button { background: #fff; color: #1e293b; border: 1px solid #cbd5e1; }
  :focus-visible { outline: 2px solid #4f46e5; outline-offset: 2px; }
  @media (prefers-color-scheme: dark) {
    body { background: #020617; color: #f1f5f9; }
    main { background: #0f172a; outline-color: #334155; box-shadow: none; }
    .eyebrow { color: #fca5a5; }
    p { color: #cbd5e1; }
    code { color: #f1f5f9; }
    a.button { background: #1e293b; color: #f1f5f9; border-color: #475569; }
    :focus-visible { outline-color: #818cf8; }
  }
</style>
</head>
<body>
<main>
  <p class="eyebrow">${escapeHtml(page.eyebrow)}</p>
  <h1>${escapeHtml(page.heading)}</h1>
  ${page.paragraphs.map(paragraph).join("\n  ")}
  ${page.actions ? `<div class="actions">${page.actions}</div>` : ""}
</main>
</body>
</html>`;
  return new Response(html, {
    status: page.status,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Robots-Tag": "noindex", ...page.headers },
  });
}
