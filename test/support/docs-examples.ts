/**
 * The documentation's runnable shell examples: every fenced block marked ```sh runnable in a
 * Markdown document, run in order in one bash session in the project folder, as a reader pastes
 * them into one terminal, against a running Keyfob (only http://localhost:3000 is replaced by its
 * URL). A block passes when it exits 0 and no JSON it prints is an OAuth error; where the document
 * shows the answer (the ```json block after it), the real answer has the same fields.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export const DOCUMENTED_ORIGIN = "http://localhost:3000";

export type Example = { code: string; answer?: Record<string, unknown> };

/** The runnable blocks of a Markdown text, each with the JSON answer shown right after it, if any. */
export function runnableExamples(markdown: string): Example[] {
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

/**
 * Runs a document's runnable examples against the Keyfob at `url` (`env`: the reader's settings,
 * e.g. its DATABASE_URL for the CLI). Answers what went wrong, each with the example and its
 * output: nothing when every example ran as documented.
 */
export async function runDocumentExamples(document: string, url: string, env: Record<string, string>): Promise<string[]> {
  const examples = runnableExamples(readFileSync(document, "utf8"));
  if (examples.length === 0) return [`${document} has no runnable examples`];
  const script = examples.map((example, i) => `printf '\\n%s\\n' '${marker(i)}'\n${example.code.replaceAll(DOCUMENTED_ORIGIN, url)}`);
  const { code, output } = await bash(script.join("\n"), { ...env, ISSUER_URL: url, KEYFOB_LOG: "silent" });
  const parts = output.split(/\n@@example (\d+)@@\n/);
  const outputs = new Map<number, string>();
  for (let i = 1; i < parts.length; i += 2) outputs.set(Number(parts[i]), parts[i + 1]);
  const context = (i: number) => `example ${i + 1} of ${document}:\n${examples[i].code}\n---\n${outputs.get(i)}`;
  const last = Math.max(...outputs.keys());
  if (code !== 0) return [`exit code ${code} in ${context(last)}`];
  return examples.flatMap((example, i) => {
    const answers = jsonLines(outputs.get(i) ?? "");
    const problems = answers.filter((answer) => "error" in answer).map((answer) => `${JSON.stringify(answer)} in ${context(i)}`);
    if (example.answer) {
      const [shown, real] = [Object.keys(example.answer).sort(), Object.keys(answers.at(-1) ?? {}).sort()];
      if (shown.join() !== real.join())
        problems.push(`the answer's fields ${real.join(", ")} differ from the shown ${shown.join(", ")} in ${context(i)}`);
    }
    return problems;
  });
}
