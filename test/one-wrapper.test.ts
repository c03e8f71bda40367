/**
 * Every page endpoint in app/ goes through the one wrapper (lib/http/endpoint.ts), which gives each
 * its limits, metrics, log lines and failure mapping, as the protocol routes get theirs from the
 * route table (lib/http/routes.ts): every HTTP method a route file in app/ exports is made by
 * `endpoint(…)`, directly or through a constant of the same file, or is one it does not take,
 * answered 405 with `Allow` by `otherMethods(…)`.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { requests } from "@/lib/metrics";
import { route } from "./support/routes";

const discovery = route("/.well-known/openid-configuration");
const live = route("/healthz/live");

const APP = path.resolve(import.meta.dirname, "..", "app");
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const WRAPPERS = new Set(["endpoint", "otherMethods"]);

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name === "route.ts" ? [full] : [];
  });
}

/** The exported HTTP methods of a route file that are not made by the wrapper. */
function unwrappedMethods(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const constants = new Map<string, ts.Expression | undefined>();
  const exported: { name: string; value: ts.Expression | undefined }[] = [];
  const isExported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && isExported(statement) && METHODS.has(statement.name.text))
      exported.push({ name: statement.name.text, value: undefined });
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) constants.set(declaration.name.text, declaration.initializer);
        if (ts.isObjectBindingPattern(declaration.name) && isExported(statement))
          for (const element of declaration.name.elements)
            if (ts.isIdentifier(element.name) && METHODS.has(element.name.text))
              exported.push({ name: element.name.text, value: declaration.initializer });
        if (ts.isIdentifier(declaration.name) && isExported(statement) && METHODS.has(declaration.name.text))
          exported.push({ name: declaration.name.text, value: declaration.initializer });
      }
  }
  const wrapped = (value: ts.Expression | undefined, depth = 0): boolean => {
    if (!value || depth > 3) return false;
    if (ts.isCallExpression(value) && ts.isIdentifier(value.expression)) return WRAPPERS.has(value.expression.text);
    if (ts.isIdentifier(value)) return wrapped(constants.get(value.text), depth + 1);
    return false;
  };
  return exported.filter((method) => !wrapped(method.value)).map((method) => method.name);
}

describe("one endpoint wrapper", () => {
  it("makes every method of every route file in app/", () => {
    const files = routeFiles(APP);
    expect(files.length).toBeGreaterThan(10); // the browser's endpoints; the protocol's are rows of lib/http/routes.ts
    const unwrapped = files.flatMap((file) => unwrappedMethods(file).map((method) => `${path.relative(APP, file)} ${method}`));
    expect(unwrapped).toEqual([]);
  });

  it("counts metadata and health requests in the metrics like the protocol's", async () => {
    const count = async (endpoint: string) =>
      (await requests.get()).values.find((value) => value.labels.endpoint === endpoint && value.labels.outcome === "success")?.value ?? 0;
    const before = [await count("discovery"), await count("health_live")];
    expect((await discovery(new Request("http://localhost/.well-known/openid-configuration"))).status).toBe(200);
    expect((await live(new Request("http://localhost/healthz/live"))).status).toBe(200);
    expect([await count("discovery"), await count("health_live")]).toEqual([before[0] + 1, before[1] + 1]);
  });
});
