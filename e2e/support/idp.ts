/**
 * A real OpenID provider (oidc-provider 9) standing in for Google or Apple: authorization code flow,
 * its development login form (any login name, any password; the login name becomes the subject),
 * and a consent screen. The "Apple" one behaves like Apple where Keyfob can tell: client_secret_post,
 * form_post responses, and email_verified sent as the string "true".
 */
import type { Server } from "node:http";
import Provider from "oidc-provider";
import type { Upstream } from "./upstream";

export const emailOf = (login: string, upstream: Upstream) => `${login}@${upstream.id}.example.test`;

export async function startIdp(upstream: Upstream, keyfobUrl: string): Promise<Server> {
  const provider = new Provider(upstream.issuer, {
    clients: [
      {
        client_id: upstream.clientId,
        client_secret: upstream.clientSecret,
        redirect_uris: [`${keyfobUrl}/api/auth/callback/${upstream.id}`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: upstream.id === "apple" ? "client_secret_post" : "client_secret_basic",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], name: ["name"] },
    // Put email and email_verified in the ID token, as Google and Apple do.
    conformIdTokenClaims: false,
    pkce: { required: () => false },
    cookies: { keys: [`e2e-${upstream.id}-cookie-key-0123456789`] },
    async findAccount(_ctx: unknown, sub: string) {
      return {
        accountId: sub,
        async claims() {
          return { sub, email: emailOf(sub, upstream), email_verified: upstream.id === "apple" ? "true" : true, name: sub };
        },
      };
    },
  });
  const server = provider.listen(upstream.port, "localhost");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  return server;
}
