/**
 * The Flow B quickstart's openid-client snippet (docs/quickstart.md, the dashboard's Integration
 * panel) run as written against a Keyfob, with the user's login on the hosted page done by the
 * caller's `login` (the authorization URL in, the URL Keyfob redirected back to out).
 */
import * as client from "openid-client";
import ts from "typescript";
import { quickstartSnippets } from "@/lib/admin/quickstart";

const CALLBACK_STEP = "// In the callback (currentUrl: the URL Keyfob redirected to):";

export async function runOpenidClientQuickstart(
  issuer: string,
  login: (authorizationUrl: URL) => Promise<URL>,
): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  const snippet = quickstartSnippets(issuer)["openid-client"];
  if (!snippet.includes(CALLBACK_STEP)) throw new Error(`the openid-client snippet lost its callback step:\n${snippet}`);
  // The application sends the browser to `url`; the user signs in; Keyfob redirects to currentUrl.
  const program = snippet
    .replace('import * as client from "openid-client";', "")
    .replace(CALLBACK_STEP, `const currentUrl = await login(url);\n${CALLBACK_STEP}`);
  const body = ts.transpileModule(`${program}\nreturn tokens;`, { compilerOptions: { target: ts.ScriptTarget.ES2022 } }).outputText;
  const run = new (Object.getPrototypeOf(async () => {}).constructor)("client", "login", body);
  return run(client, login);
}
