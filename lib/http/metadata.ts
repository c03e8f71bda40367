import { openidConfiguration } from "../discovery";
import type { KeyStore } from "../keys/keystore";
import { PUBLIC_CORS } from "./cors";
import { errorAnswer, toOAuthError, type Answer } from "./respond";

/** Verifiers may cache the JWKS this long; new keys are published KEY_PUBLISH_LEAD (longer) before they sign. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** GET /keys: public keys, readable from any origin (browser applications verify ID tokens with them). */
export async function jwksAnswer(keys: KeyStore): Promise<Answer> {
  try {
    return publicJson({ keys: await keys.publicKeys() }, JWKS_MAX_AGE_SECONDS);
  } catch (error) {
    return errorAnswer(toOAuthError(error), PUBLIC_CORS);
  }
}

/** GET /.well-known/openid-configuration, readable from any origin (OpenID Connect Discovery 1.0). */
export function discoveryAnswer(config: Parameters<typeof openidConfiguration>[0]): Answer {
  return publicJson(openidConfiguration(config), 3600);
}

/** Public metadata that caches may keep `maxAge` seconds. */
const publicJson = (body: unknown, maxAge: number): Answer => ({
  status: 200,
  headers: { "Content-Type": "application/json", "Cache-Control": `public, max-age=${maxAge}`, ...PUBLIC_CORS },
  body: JSON.stringify(body),
});
