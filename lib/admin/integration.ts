import { isAddress } from "viem";
import { API_BASE } from "./api";

/**
 * What an application needs to integrate with Keyfob as one client: the issuer, discovery, every
 * endpoint, and copyable snippets for both flows filled in with the client's id and a redirect URI
 * it has registered. The browser test runs the curl snippets and the authorization URL against the
 * real server, so they are kept exactly runnable: shell values are single-quoted, and what the
 * developer supplies comes from environment variables (ADDRESS, STATE, SIGNATURE, CODE,
 * CODE_VERIFIER, KEYFOB_CLIENT_SECRET, KEYFOB_PRIVATE_KEY). The Flow B quickstart (docs/quickstart.md,
 * examples/nextjs-authjs) embeds the openid-client and Auth.js snippets (lib/admin/quickstart.ts).
 */

export type IntegrationClient = {
  id: string;
  confidential: boolean;
  managementApi: boolean;
  /** Its token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  redirectUris: string[];
};

/** Keyfob's own callback for the dashboard's "try a sign-in" (app/admin/try/callback). */
export const tryRedirectUri = (issuer: string) => `${issuer}/admin/try/callback`;

/** A value as one single-quoted shell word. */
export const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Percent-encoding for a URL inside a double-quoted shell string: `!` too (bash's history expansion). */
const urlPart = (value: string) => encodeURIComponent(value).replace(/!/g, "%21").replace(/'/g, "%27");

export function integration(issuer: string, client: IntegrationClient, options: { chainId?: number } = {}) {
  const appUris = client.redirectUris.filter((uri) => uri !== tryRedirectUri(issuer));
  const redirectUri = appUris[0] ?? "https://app.example.com/callback";
  const q = shellQuote;
  const license = isAddress(client.id, { strict: false });
  const chain = options.chainId && options.chainId !== 1 ? options.chainId : undefined;

  const endpoints = [
    { name: "Authorization (hosted login)", url: `${issuer}/auth` },
    { name: "Token", url: `${issuer}/token` },
    { name: "UserInfo", url: `${issuer}/userinfo` },
    { name: "Revocation", url: `${issuer}/token/revoke` },
    { name: "Introspection", url: `${issuer}/token/introspect` },
    { name: "JWKS", url: `${issuer}/keys` },
    { name: "End session (logout)", url: `${issuer}/session/end` },
    { name: "Flow A: generate challenge", url: `${issuer}/auth/web3/generate_challenge` },
    { name: "Flow A: submit challenge", url: `${issuer}/auth/web3/submit_challenge` },
  ];

  const flowAChallenge = [
    `# Flow A, step 1: a challenge for the address the tokens are for${license ? " (the license itself when a signer signs for it)" : " (the wallet that signs)"}`,
    `ADDRESS=\${ADDRESS:-${license ? client.id : "0xYourWalletAddress"}}`,
    `curl -sS -X POST ${q(`${issuer}/auth/web3/generate_challenge`)} \\`,
    `  --data-urlencode ${q(`client_id=${client.id}`)} \\`,
    `  --data-urlencode ${q(`domain=${redirectUri}`)} \\`,
    `  --data-urlencode 'scope=openid email' \\`,
    `  --data-urlencode 'response_type=code' \\`,
    `  --data-urlencode "address=$ADDRESS"`,
    `# => {"state":"…","challenge":"…"}: sign the challenge text with personal_sign (EIP-191)`,
  ].join("\n");

  const flowASubmit = [
    `# Flow A, step 2: STATE from step 1, SIGNATURE the 0x… personal_sign signature of its challenge`,
    `curl -sS -X POST ${q(`${issuer}/auth/web3/submit_challenge`)} \\`,
    `  --data-urlencode ${q(`client_id=${client.id}`)} \\`,
    `  --data-urlencode "state=$STATE" \\`,
    `  --data-urlencode 'grant_type=authorization_code' \\`,
    `  --data-urlencode ${q(`domain=${redirectUri}`)} \\`,
    `  --data-urlencode "signature=$SIGNATURE"`,
    `# => {"access_token":"…","token_type":"bearer","expires_in":…,"id_token":"…"}`,
  ].join("\n");

  const flowALibrary = [
    `// Flow A with Keyfob's client library, @keyfob/flow-a-client (packages/flow-a-client in Keyfob's repository: npm pack, then`,
    `// npm install the .tgz): it asks for the challenge, checks and signs it, and submits it.`,
    `import { getToken } from "@keyfob/flow-a-client";`,
    ``,
    `const tokens = await getToken({`,
    `  authUrl: ${JSON.stringify(issuer)},`,
    `  clientId: ${JSON.stringify(client.id)},`,
    `  domain: ${JSON.stringify(redirectUri)},`,
    `  privateKey: process.env.KEYFOB_PRIVATE_KEY as \`0x\${string}\`, // ${license ? "the license's key, or one of its signers'" : "the wallet's key"}`,
    ...(chain ? [`  chainId: ${chain},`] : []),
    `});`,
    `console.log(tokens.access_token);`,
  ].join("\n");

  const authorizationUrl = [
    `# Flow B: a fresh PKCE verifier for every sign-in (keep it for the code exchange) and the authorization URL`,
    `CODE_VERIFIER=$(openssl rand -base64 48 | tr '+/' '-_' | tr -d '=\\n')`,
    `CODE_CHALLENGE=$(printf '%s' "$CODE_VERIFIER" | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')`,
    `STATE=$(openssl rand -hex 16)`,
    `echo "code_verifier: $CODE_VERIFIER"`,
    `echo "${issuer}/auth?response_type=code&client_id=${urlPart(client.id)}&redirect_uri=${urlPart(redirectUri)}&scope=openid%20email&state=$STATE&code_challenge=$CODE_CHALLENGE&code_challenge_method=S256"`,
  ].join("\n");

  const tokenExchange = [
    `# Flow B: exchange the code from the redirect (…?code=…&state=…) with the verifier`,
    `curl -sS -X POST ${q(`${issuer}/token`)} \\`,
    `  --data-urlencode 'grant_type=authorization_code' \\`,
    `  --data-urlencode "code=$CODE" \\`,
    `  --data-urlencode ${q(`redirect_uri=${redirectUri}`)} \\`,
    `  --data-urlencode ${q(`client_id=${client.id}`)} \\`,
    client.confidential ? `  --data-urlencode "code_verifier=$CODE_VERIFIER" \\` : `  --data-urlencode "code_verifier=$CODE_VERIFIER"`,
    ...(client.confidential ? [`  --data-urlencode "client_secret=$KEYFOB_CLIENT_SECRET"`] : []),
  ].join("\n");

  const insecure = issuer.startsWith("http:");
  const openidClient = [
    `// openid-client 6 (npm i openid-client)`,
    `import * as client from "openid-client";`,
    ``,
    `const config = await client.discovery(`,
    `  new URL(${JSON.stringify(issuer)}),`,
    `  ${JSON.stringify(client.id)},`,
    client.confidential ? `  process.env.KEYFOB_CLIENT_SECRET,` : `  undefined,`,
    client.confidential ? `  undefined,` : `  client.None(), // a public client: PKCE, no secret`,
    ...(insecure ? [`  { execute: [client.allowInsecureRequests] }, // http: local development only`] : []),
    `);`,
    `const redirect_uri = ${JSON.stringify(redirectUri)};`,
    ``,
    `// Start a sign-in; keep code_verifier and state in the user's session.`,
    `const code_verifier = client.randomPKCECodeVerifier();`,
    `const state = client.randomState();`,
    `const url = client.buildAuthorizationUrl(config, {`,
    `  redirect_uri,`,
    `  scope: "openid email",`,
    `  state,`,
    `  code_challenge: await client.calculatePKCECodeChallenge(code_verifier),`,
    `  code_challenge_method: "S256",`,
    `});`,
    ``,
    `// In the callback (currentUrl: the URL Keyfob redirected to):`,
    `const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: code_verifier, expectedState: state });`,
    `console.log(tokens.claims());`,
  ].join("\n");

  // DPoP (RFC 9449): shown when the client must use it, and to public clients, whose refresh tokens it binds too.
  const dpop =
    client.dpopBoundAccessTokens || !client.confidential
      ? [
          `// DPoP (RFC 9449) with openid-client 6: the tokens are bound to a key pair that stays in this process,`,
          `// so whoever steals them cannot use them without it. ${
            client.dpopBoundAccessTokens
              ? "This client must send a DPoP proof with every token request (curl cannot make one)."
              : "Optional for this client; with it, its refresh tokens are bound to the key too."
          }`,
          `// config, currentUrl, code_verifier and state as in the openid-client snippet.`,
          `const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair()); // ES256; keep it for the tokens' lifetime`,
          ``,
          `// Pass { DPoP } to every call with the tokens: a fresh proof (and Keyfob's DPoP-Nonce, when asked) goes with each.`,
          `const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: code_verifier, expectedState: state }, undefined, { DPoP });`,
          `console.log(tokens.token_type); // "dpop"`,
          `const userinfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP });`,
          `// With offline_access: const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });`,
        ].join("\n")
      : undefined;

  const authjs = [
    `// auth.ts, Auth.js (next-auth 5). Register <your app>/api/auth/callback/keyfob as a redirect URI of this client.`,
    `import NextAuth from "next-auth";`,
    ``,
    `export const { handlers, auth, signIn, signOut } = NextAuth({`,
    `  providers: [`,
    `    {`,
    `      id: "keyfob",`,
    `      name: "Keyfob",`,
    `      type: "oidc",`,
    `      issuer: ${JSON.stringify(issuer)},`,
    `      clientId: ${JSON.stringify(client.id)},`,
    client.confidential
      ? `      clientSecret: process.env.KEYFOB_CLIENT_SECRET,`
      : `      client: { token_endpoint_auth_method: "none" }, // a public client: PKCE, no secret`,
    `      checks: ["pkce", "state"],`,
    `      authorization: { params: { scope: "openid email" } },`,
    `    },`,
    `  ],`,
    `});`,
  ].join("\n");

  const managementApi = client.confidential
    ? [
        `# The management API: a token (client_credentials) with every scope the client is allowed`,
        `# (add scope=keyfob:read, for one, to ask for fewer), then the operations those scopes allow.`,
        `# A refusal of the token (a wrong secret: invalid_client) is printed as /token answered it.`,
        `if RESPONSE=$(curl -sS --fail-with-body -X POST ${q(`${issuer}/token`)} \\`,
        `  --data-urlencode 'grant_type=client_credentials' \\`,
        `  --data-urlencode ${q(`client_id=${client.id}`)} \\`,
        `  --data-urlencode "client_secret=$KEYFOB_CLIENT_SECRET"); then`,
        `  TOKEN=$(printf '%s' "$RESPONSE" | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
        `  curl -sS ${q(`${issuer}${API_BASE}/clients`)} -H "Authorization: Bearer $TOKEN"`,
        `else`,
        `  echo "$RESPONSE"`,
        `fi`,
        `# Every operation: ${issuer}${API_BASE}/openapi.json`,
      ].join("\n")
    : undefined;

  return {
    issuer,
    discovery: `${issuer}/.well-known/openid-configuration`,
    endpoints,
    redirectUri,
    redirectUriRegistered: appUris.length > 0,
    snippets: { flowAChallenge, flowASubmit, flowALibrary, authorizationUrl, tokenExchange, openidClient, dpop, authjs, managementApi },
  };
}
