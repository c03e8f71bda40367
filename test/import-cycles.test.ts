/**
 * lib/ has no import cycles: a module in a cycle may run before the ones it needs are initialised,
 * and a cycle makes two modules one in all but name.
 *
 * Counted: static `import … from`, `export … from`, side-effect imports, and `import("…")` with a
 * literal path (a lazy import hides a cycle, it does not remove it). Not counted: `import type`,
 * `export type`, and imports whose every name is marked `type`, since the compiler erases them and
 * they create no runtime cycle. A plain import used only in types is erased too, but is counted:
 * marking it `type` says so.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const LIB = path.join(ROOT, "lib");
/** Prisma's generated client is not ours to arrange. */
const SKIP = [path.join(LIB, "db", "generated")];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.includes(full) ? [] : sources(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** The module paths a file imports at runtime. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = clause?.isTypeOnly || (!clause?.name && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteralLike(specifier)) found.push(specifier.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The lib/ file a specifier names, or undefined for packages and files outside lib/. */
function resolve(from: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith(".")) base = path.resolve(path.dirname(from), specifier);
  else if (specifier.startsWith("@/")) base = path.join(ROOT, specifier.slice(2));
  else return undefined;
  if (!base.startsWith(LIB + path.sep)) return undefined;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")];
  return candidates.find((candidate) => /\.tsx?$/.test(candidate) && existsSync(candidate));
}

function importGraph(): Map<string, string[]> {
  const files = new Set(sources(LIB));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = runtimeImports(file).map((specifier) => resolve(file, specifier));
    graph.set(file, [...new Set(targets.filter((target): target is string => target !== undefined && files.has(target)))]);
  }
  return graph;
}

/** Tarjan's strongly connected components; each one with two or more files (or a self-import) holds a cycle. */
function tangles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)!.includes(node)) result.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return result;
}

/** The shortest way from a component's first file back to itself, as `a → b → a`. */
function cycleThrough(component: string[], graph: Map<string, string[]>): string {
  const start = component[0];
  const inside = new Set(component);
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node)!) {
      if (!inside.has(next) || previous.has(next)) continue;
      previous.set(next, node);
      if (next === start) queue.length = 0;
      else queue.push(next);
    }
  }
  const route = [start];
  for (let node = previous.get(start)!; node !== start; node = previous.get(node)!) route.unshift(node);
  route.unshift(start);
  return route.map((file) => path.relative(ROOT, file)).join(" → ");
}

describe("lib/ imports", () => {
  it("form no cycle", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    const cycles = tangles(graph).map((component) => {
      const also = component.length > 2 ? ` (with ${component.map((file) => path.relative(ROOT, file)).join(", ")})` : "";
      return cycleThrough(component, graph) + also;
    });
    expect(cycles).toEqual([]);
  });
});
