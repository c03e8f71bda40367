/**
 * The protocol endpoints as route handlers bound to one Keyfob instance, wrapped as the app's routes
 * wrap them (lib/http/endpoint.ts: limits, CORS, errors, audit of failures), for tests that run two
 * instances side by side: the app's own route modules serve the process-wide instance only.
 */
import { generateChallenge } from "@/lib/actions/generate-challenge";
import { introspectToken } from "@/lib/actions/introspect";
import { revokeToken } from "@/lib/actions/revoke";
import { submitChallenge } from "@/lib/actions/submit-challenge";
import { token } from "@/lib/actions/token";
import { userinfo } from "@/lib/actions/userinfo";
import { clientIp } from "@/lib/http/client-ip";
import { endpoint } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import { ISSUER } from "./flow-a";

export function routesOn(k: Keyfob) {
  const on = () => k;
  return {
    generateChallenge: endpoint(
      "generate_challenge",
      (keyfob, request, params) => generateChallenge(keyfob, params, { ip: clientIp(request) }),
      on,
    ),
    submitChallenge: endpoint(
      "submit_challenge",
      (keyfob, request, params, caller) => submitChallenge(keyfob, request, params, caller),
      on,
    ),
    token: endpoint("token", token, on),
    revoke: endpoint("revoke", revokeToken, on),
    introspect: endpoint("introspect", introspectToken, on),
    userinfo: endpoint("userinfo", userinfo, on),
  };
}

/** A form POST to `path` on the issuer, as clients send the protocol requests. */
export function formPost(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${ISSUER}${path}`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
}
