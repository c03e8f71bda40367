import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// The JS schema engine works offline; the CLI's native engines would be downloaded.
// The CLI must see a syntactically valid URL even for `prisma generate`.
const url = process.env.DATABASE_URL ?? "postgresql://keyfob@localhost:5432/keyfob";
process.env.DATABASE_URL = url;

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  async adapter() {
    return new PrismaPg({ connectionString: url });
  },
});
