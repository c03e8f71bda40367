/**
 * The documentation's shell examples run as written. Every fenced block marked ```sh runnable in
 * the README, docs/endpoints.md and docs/quickstart.md is run, in order, in one bash session in the project folder, as
 * a reader pastes them into one terminal, against a Keyfob started on a database of its own that
 * holds nothing yet; only the host and port (http://localhost:3000) are replaced by the instance's.
 * A block passes when it exits 0 and no JSON it prints is an OAuth error; where the document shows
 * the answer (the ```json block after it), the real answer has the same fields. So an example that
 * forgets to register its client (401 invalid_client) fails here, not in a newcomer's terminal.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { migrateDatabase } from "@/lib/db/migrate";
import { emptyDatabase } from "./support/database";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const DOCUMENTED_ORIGIN = "http://localhost:3000";
const DOCUMENTS = ["README.md", "docs/endpoints.md", "docs/quickstart.md"];

type Example = { code: string; answer?: Record<string, unknown> };

/** The runnable blocks of a Markdown text, each with the JSON answer shown right after it, if any. */
function runnableExamples(markdown: string): Example[] {
  const fence = /^( *)```([^\n]*)\n([\s\S]*?)^\1```[ \t]*$/gm;
  const blocks = [...markdown.matchAll(fence)].map((m) => ({
    info: m[2].trim(),
    code: m[3].replace(new RegExp(`^${m[1]}`, "gm"), ""),
  }));
  return blocks.flatMap((block, i) =>
    block.info === "sh runnable"
      ? [{ code: block.code, answer: blocks[i + 1]?.info === "json" ? JSON.parse(blocks[i + 1].code) : undefined }]
      : [],
  );
}

const marker = (i: number) => `@@example ${i}@@`;

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-eo", "pipefail", "-c", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/** The JSON objects among a block's output lines (curl's answers; the CLI's lines are text). */
const jsonLines = (output: string) =>
  output.split("\n").flatMap((line) => {
    if (!line.trim().startsWith("{")) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

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
    const examples = runnableExamples(readFileSync(document, "utf8"));
    expect(examples.length).toBeGreaterThan(0);
    const databaseUrl = await emptyDatabase(`docs_examples_${n}`);
    await migrateDatabase(databaseUrl);
    const instance = await startProtocolProcess((url) => ({ DATABASE_URL: databaseUrl, ISSUER_URL: url }));
    instances.push(instance);

    const script = examples.map(
      (example, i) => `printf '\\n%s\\n' '${marker(i)}'\n${example.code.replaceAll(DOCUMENTED_ORIGIN, instance.url)}`,
    );
    const { code, output } = await bash(script.join("\n"), { DATABASE_URL: databaseUrl, ISSUER_URL: instance.url, KEYFOB_LOG: "silent" });
    const parts = output.split(/\n@@example (\d+)@@\n/);
    const outputs = new Map<number, string>();
    for (let i = 1; i < parts.length; i += 2) outputs.set(Number(parts[i]), parts[i + 1]);
    const last = Math.max(...outputs.keys());
    expect(code, `example ${last + 1} of ${document} failed:\n${examples[last].code}\n---\n${outputs.get(last)}`).toBe(0);

    examples.forEach((example, i) => {
      const answers = jsonLines(outputs.get(i) ?? "");
      const context = `example ${i + 1} of ${document}:\n${example.code}\n---\n${outputs.get(i)}`;
      for (const answer of answers) expect(answer, context).not.toHaveProperty("error");
      if (example.answer) expect(Object.keys(answers.at(-1) ?? {}).sort(), context).toEqual(Object.keys(example.answer).sort());
    });
  });
}
