/**
 * A function under lib/ asks for what it uses of the Keyfob (`Pick<Keyfob, "store" | "clock">`), so
 * its signature says which parts it reaches and a test can build just those. Only the modules that
 * route a request to an action, or run a table of actions, take the whole context: they pass it on.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const LIB = path.join(ROOT, "lib");
const COMPOSERS = ["lib/actions/token.ts", "lib/admin/api.ts", "lib/admin/changes.ts", "lib/admin/try-sign-in.ts", "lib/http/routes.ts"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sources(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** "file:line" of every parameter of a function with a body whose type is the whole Keyfob. */
function wholeKeyfobParameters(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isParameter(node) &&
      node.type &&
      ts.isTypeReferenceNode(node.type) &&
      node.type.typeName.getText(source) === "Keyfob" &&
      (node.parent as ts.FunctionLikeDeclaration).body
    ) {
      found.push(`${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it("only the modules that route to actions take the whole Keyfob", () => {
  const found = sources(LIB).flatMap(wholeKeyfobParameters);
  const elsewhere = found.filter((where) => !COMPOSERS.includes(where.split(":")[0]));
  expect(elsewhere).toEqual([]);
  // The check sees what it looks for: the composers do take it.
  expect(found.filter((where) => where.startsWith("lib/http/routes.ts")).length).toBeGreaterThan(0);
});
