import { integration, type IntegrationClient } from "./integration";

/**
 * The Flow B quickstart's code is the dashboard's Integration panel's (lib/admin/integration.ts),
 * rendered for the quickstart's example clients: docs/quickstart.md embeds it between
 * `<!-- snippet:<name> -->` and `<!-- /snippet -->`, and examples/nextjs-authjs/auth.ts is the
 * Auth.js snippet as it is. `npm run docs:quickstart` writes both; test/quickstart.test.ts checks
 * that they are what this renders, and runs the code against Keyfob.
 */

/** Where the quickstart's Keyfob runs: `npm start`'s default. */
export const QUICKSTART_ISSUER = "http://localhost:3000";

/** A server-side application with openid-client: a public client (PKCE), its callback on port 8080. */
export const OPENID_CLIENT_APP: IntegrationClient = {
  id: "kf_quickstart",
  confidential: false,
  managementApi: false,
  dpopBoundAccessTokens: false,
  redirectUris: ["http://localhost:8080/callback"],
};

/** examples/nextjs-authjs on port 3001, with Auth.js's callback for a provider with the id `keyfob`. */
export const AUTHJS_APP: IntegrationClient = {
  id: "kf_nextjs",
  confidential: false,
  managementApi: false,
  dpopBoundAccessTokens: false,
  redirectUris: ["http://localhost:3001/api/auth/callback/keyfob"],
};

export const AUTHJS_EXAMPLE_FILE = "examples/nextjs-authjs/auth.ts";

/** The snippets the quickstart embeds, by name, for a Keyfob at `issuer`. */
export function quickstartSnippets(issuer = QUICKSTART_ISSUER): Record<string, string> {
  return {
    "openid-client": integration(issuer, OPENID_CLIENT_APP).snippets.openidClient,
    authjs: integration(issuer, AUTHJS_APP).snippets.authjs,
  };
}

/** `markdown` with every embedded snippet replaced by its rendering; an unknown name is an error. */
export function embedSnippets(markdown: string, snippets = quickstartSnippets()): string {
  return markdown.replace(/(<!-- snippet:([\w-]+) -->\n)[\s\S]*?(<!-- \/snippet -->)/g, (_, open: string, name: string, close: string) => {
    if (!(name in snippets)) throw new Error(`no snippet named ${name}`);
    return `${open}\`\`\`ts\n${snippets[name]}\n\`\`\`\n${close}`;
  });
}
