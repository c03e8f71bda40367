/**
 * Summarises a V8 .cpuprofile of a Keyfob server (node --cpu-prof) by where the main thread's time
 * went: secp256k1, Prisma, pg, Next.js, HTTP, web streams, crypto, GC…, over the busy time only,
 * then the functions that took the most time themselves.
 *
 *   npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--window <from>-<until>]… [--operations <n>]
 *
 * --window keeps only the samples between two monotonic-clock times in µs (process.hrtime, the
 * profile's own clock), e.g. the measured phases of `npm run bench -- --profile <dir>`, which passes
 * them; --operations prints the time per operation as well. See bench/README.md ("Profiling").
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const RULES: [string, (f: CallFrame) => boolean][] = [
  ["Prisma query compiler (wasm)", (f) => f.url.startsWith("wasm://") || f.url.includes("query_compiler")],
  ["Prisma client runtime", (f) => f.url.includes("@prisma/client")],
  ["Prisma pg adapter", (f) => f.url.includes("@prisma/adapter-pg")],
  ["pg driver", (f) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(f.url)],
  ["secp256k1 / keccak (noble)", (f) => f.url.includes("noble") || f.url.includes("secp256k1")],
  ["node crypto / jose", (f) => f.url.includes("node:internal/crypto") || f.url.includes("jose")],
  ["web streams / undici", (f) => f.url.includes("webstreams") || f.url.includes("undici")],
  ["Next.js server", (f) => f.url.includes("node_modules/next/")],
  ["node http / net", (f) => f.url.includes("_http_") || f.url.includes("node:net") || f.url.includes("stream_base")],
  ["app and bundled code (.next chunks)", (f) => /\/\.next\/builds\/[^/]+\/server\//.test(f.url)],
  ["Keyfob lib/ and server/ (tsx)", (f) => /\/work\/[^/]+\/(lib|server|app)\//.test(f.url) || /\/(lib|server|app)\/[^/]+\.ts/.test(f.url)],
  ["async_hooks", (f) => f.url.includes("async_hooks")],
  ["module loading", (f) => f.url.includes("node:internal/modules")],
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { window: { type: "string", multiple: true }, operations: { type: "string" } },
});
const file = positionals[0];
if (!file) {
  console.error("usage: tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--window <from>-<until>]… [--operations <n>]");
  process.exit(2);
}
const windows = (values.window ?? []).map((w) => w.split("-").map(Number) as [number, number]);
const operations = values.operations ? Number(values.operations) : undefined;
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const memo = new Map<number, string>();
function category(id: number): string {
  const known = memo.get(id);
  if (known) return known;
  const leaf = nodes.get(id)!.callFrame;
  let found: string | undefined;
  if (leaf.functionName === "(idle)") found = "idle";
  else if (leaf.functionName === "(garbage collector)") found = "GC";
  // The nearest frame that belongs to a known package decides, so native leaves (writev, …) go to their caller.
  for (let cur: number | undefined = id; !found && cur !== undefined; cur = parent.get(cur)) {
    const frame = nodes.get(cur)!.callFrame;
    found = RULES.find(([, test]) => test(frame))?.[0];
  }
  found ??= "other";
  memo.set(id, found);
  return found;
}

const totals = new Map<string, number>();
const selfTimes = new Map<string, number>();
let time = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i] ?? 0;
  if (windows.length > 0 && !windows.some(([from, until]) => time >= from && time <= until)) continue;
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  const c = category(profile.samples[i]);
  totals.set(c, (totals.get(c) ?? 0) + ms);
  if (c === "idle") continue;
  const frame = nodes.get(profile.samples[i])!.callFrame;
  const name = `${frame.functionName || "(anonymous)"}  ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(\.next|lib|server|app)\//, "$1/")}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
  selfTimes.set(name, (selfTimes.get(name) ?? 0) + ms);
}
const busy = [...totals].filter(([c]) => c !== "idle").reduce((sum, [, ms]) => sum + ms, 0);
const perOp = (ms: number) => (operations ? `  ${(ms / operations).toFixed(3).padStart(7)} ms/op` : "");
console.log(
  `main thread busy ${(busy / 1000).toFixed(1)} s, idle ${((totals.get("idle") ?? 0) / 1000).toFixed(1)} s` +
    (windows.length ? ` (within ${windows.length} window(s))` : "") +
    (operations ? `; ${operations} operations, ${(busy / operations).toFixed(3)} ms of main thread each` : ""),
);
for (const [c, ms] of [...totals].filter(([c]) => c !== "idle").sort((a, b) => b[1] - a[1])) {
  console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)}%${perOp(ms)}  ${c}`);
}
console.log("\nfunctions by self time:");
for (const [name, ms] of [...selfTimes].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)}%${perOp(ms)}  ${name}`);
}
