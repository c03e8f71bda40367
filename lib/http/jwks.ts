import type { KeyStore } from "../keys/keystore";
import { errorResponse, toOAuthError } from "./respond";

/** Verifiers may cache the JWKS this long; new keys are published KEY_PUBLISH_LEAD (longer) before they sign. */
export const JWKS_MAX_AGE_SECONDS = 300;

export async function jwksResponse(keys: KeyStore): Promise<Response> {
  try {
    return Response.json(
      { keys: await keys.publicKeys() },
      { headers: { "Cache-Control": `public, max-age=${JWKS_MAX_AGE_SECONDS}` } },
    );
  } catch (error) {
    return errorResponse(toOAuthError(error));
  }
}
