// auth.ts, Auth.js (next-auth 5). Register <your app>/api/auth/callback/keyfob as a redirect URI of this client.
import NextAuth from "next-auth";

export const { handlers, auth, signIn, signOut } = NextAuth({
  providers: [
    {
      id: "keyfob",
      name: "Keyfob",
      type: "oidc",
      issuer: "http://localhost:3000",
      clientId: "kf_nextjs",
      client: { token_endpoint_auth_method: "none" }, // a public client: PKCE, no secret
      checks: ["pkce", "state"],
      authorization: { params: { scope: "openid email" } },
    },
  ],
});
