/**
 * The client page's table of contents: a link to each of its sections, all of which stay on the
 * page (no tabs hiding any). Above the sections on narrow screens, a column beside them on wide
 * ones, where it stays in view while the page scrolls.
 */
const SECTIONS = [
  ["details", "Details"],
  ["integration", "Integration"],
  ["redirect-uris", "Redirect URIs"],
  ["post-logout-redirect-uris", "Post-logout URIs"],
  ["allowed-origins", "Browser apps (CORS)"],
  ["signers", "Signers"],
  ["secret", "Client secret"],
  ["authentication", "Authentication"],
  ["settings", "Settings"],
  ["backchannel-logout", "Back-channel logout"],
  ["danger", "Delete client"],
] as const;

export function ClientSections() {
  return (
    <nav aria-label="Sections of this client" className="lg:sticky lg:top-4 lg:self-start">
      <ul className="flex flex-wrap gap-1.5 text-sm lg:flex-col lg:gap-0.5">
        {SECTIONS.map(([id, title]) => (
          <li key={id}>
            <a
              href={`#${id}`}
              className="inline-block rounded-md px-2.5 py-1 text-slate-600 ring-1 ring-slate-200 hover:bg-white hover:text-slate-900 focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:outline-none lg:block lg:ring-0"
            >
              {title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
