import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client";

export type Database = PrismaClient;
export { Prisma } from "./generated/client";

export function createDatabase(url: string, poolSize = 10): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}
