import { openidConfiguration } from "../discovery";
import type { KeyStore } from "../keys/keystore";
import { PUBLIC_CORS } from "./cors";
import { errorResponse, toOAuthError } from "./respond";

/** Verifiers may cache the JWKS this long; new keys are published KEY_PUBLISH_LEAD (longer) before they sign. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** GET /keys: public keys, readable from any origin (browser applications verify ID tokens with them). */
export async function jwksResponse(keys: KeyStore): Promise<Response> {
  try {
    return Response.json(
      { keys: await keys.publicKeys() },
      { headers: { "Cache-Control": `public, max-age=${JWKS_MAX_AGE_SECONDS}`, ...PUBLIC_CORS } },
    );
  } catch (error) {
    return errorResponse(toOAuthError(error), PUBLIC_CORS);
  }
}

/** GET /.well-known/openid-configuration, readable from any origin (OpenID Connect Discovery 1.0). */
export function discoveryResponse(issuer: string): Response {
  return Response.json(openidConfiguration(issuer), { headers: { "Cache-Control": "public, max-age=3600", ...PUBLIC_CORS } });
}
