/** Loads ./.env, when there is one, before the configuration is read (the variables already set win). */
import { existsSync } from "node:fs";

if (existsSync(".env")) process.loadEnvFile(".env");
