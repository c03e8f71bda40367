/**
 * What the launcher prints once Keyfob serves, for someone who just ran `npm start`: where the
 * dashboard and the account page are, how the first admin is named, how an application is
 * registered, and where the docs are.
 */
export function nextSteps(issuerUrl: string): string {
  return [
    "Next steps:",
    `  Dashboard      ${issuerUrl}/admin  (admins only)`,
    `  Your account   ${issuerUrl}/account`,
    "  First admin    npm run keyfob -- admins grant <address>  (in another terminal; then sign in to the dashboard with that wallet)",
    '  An application npm run keyfob -- clients add --name "My app"  (then its redirect URI: npm run keyfob -- redirect-uris add ...)',
    `  Docs           README.md, docs/quickstart.md (sign users in), docs/endpoints.md; discovery: ${issuerUrl}/.well-known/openid-configuration`,
  ].join("\n");
}
