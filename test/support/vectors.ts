import { readFileSync } from "node:fs";
import path from "node:path";

/** The known-answer vectors of Flow A's wire format, kept in shared/ beside the repository. */
export const flowAVectors = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, "../../../shared/vectors/flow-a.json"), "utf8"),
);
