/**
 * The documentation's shell examples run as written. Every fenced block marked ```sh runnable in
 * the README, docs/endpoints.md and docs/quickstart.md is run, in order, in one bash session in the project folder, as
 * a reader pastes them into one terminal, against a Keyfob started on a database of its own that
 * holds nothing yet; only the host and port (http://localhost:3000) are replaced by the instance's.
 * A block passes when it exits 0 and no JSON it prints is an OAuth error; where the document shows
 * the answer (the ```json block after it), the real answer has the same fields. So an example that
 * forgets to register its client (401 invalid_client) fails here, not in a newcomer's terminal.
 */
import { readFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { migrateDatabase } from "@/lib/db/migrate";
import { emptyDatabase } from "./support/database";
import { runDocumentExamples, runnableExamples } from "./support/docs-examples";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const DOCUMENTS = ["README.md", "docs/endpoints.md", "docs/quickstart.md"];

const instances: ProtocolProcess[] = [];
afterAll(async () => {
  for (const instance of instances) await instance.stop();
});

it("finds the runnable examples, and the answers shown after them", () => {
  const endpoints = runnableExamples(readFileSync("docs/endpoints.md", "utf8"));
  expect(endpoints.length).toBeGreaterThanOrEqual(6);
  expect(endpoints[0].code).toMatch(/^npm run keyfob -- clients add/);
  expect(endpoints[0].answer).toHaveProperty("challenge");
});

for (const [n, document] of DOCUMENTS.entries()) {
  it(`runs ${document}'s shell examples from a fresh start`, { timeout: 600_000 }, async () => {
    const databaseUrl = await emptyDatabase(`docs_examples_${n}`);
    await migrateDatabase(databaseUrl);
    const instance = await startProtocolProcess((url) => ({ DATABASE_URL: databaseUrl, ISSUER_URL: url }));
    instances.push(instance);
    expect(await runDocumentExamples(document, instance.url, { DATABASE_URL: databaseUrl })).toEqual([]);
  });
}
