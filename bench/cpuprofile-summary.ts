/**
 * Summarises a V8 .cpuprofile of a Keyfob server (node --cpu-prof) by where the main thread's time
 * went: secp256k1, Prisma, pg, Next.js, HTTP, web streams, crypto, GC…, over the busy seconds only.
 *
 *   npx tsx bench/cpuprofile-summary.ts /tmp/prof/CPU.*.cpuprofile
 *
 * See bench/README.md ("Profiling") for how to record one under `npm run bench`.
 */
import { readFileSync } from "node:fs";

type CallFrame = { functionName: string; url: string };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const RULES: [string, (f: CallFrame) => boolean][] = [
  ["Prisma query compiler (wasm)", (f) => f.url.startsWith("wasm://") || f.url.includes("query_compiler")],
  ["Prisma client runtime", (f) => f.url.includes("@prisma/client")],
  ["Prisma pg adapter", (f) => f.url.includes("@prisma/adapter-pg")],
  ["pg driver", (f) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(f.url)],
  ["secp256k1 / keccak (noble)", (f) => f.url.includes("noble")],
  ["node crypto / jose", (f) => f.url.includes("node:internal/crypto") || f.url.includes("jose")],
  ["web streams / undici", (f) => f.url.includes("webstreams") || f.url.includes("undici")],
  ["Next.js server", (f) => f.url.includes("node_modules/next/")],
  ["node http / net", (f) => f.url.includes("_http_") || f.url.includes("node:net") || f.url.includes("stream_base")],
  ["app and bundled code (.next chunks)", (f) => f.url.includes(".next/server")],
  ["async_hooks", (f) => f.url.includes("async_hooks")],
  ["module loading", (f) => f.url.includes("node:internal/modules")],
];

const file = process.argv[2];
if (!file) {
  console.error("usage: tsx bench/cpuprofile-summary.ts <file.cpuprofile>");
  process.exit(2);
}
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
for (let i = 0; i < profile.samples.length; i++) {
  const c = category(profile.samples[i]);
  totals.set(c, (totals.get(c) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
}
const busy = [...totals].filter(([c]) => c !== "idle").reduce((sum, [, ms]) => sum + ms, 0);
console.log(`main thread busy ${(busy / 1000).toFixed(1)} s, idle ${((totals.get("idle") ?? 0) / 1000).toFixed(1)} s`);
for (const [c, ms] of [...totals].filter(([c]) => c !== "idle").sort((a, b) => b[1] - a[1])) {
  console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${c}`);
}
