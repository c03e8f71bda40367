import { openidConfiguration } from "../discovery";
import type { Keyfob } from "../keyfob";
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

/**
 * GET /.well-known/openid-configuration (and RFC 8414's path), readable from any origin (OpenID
 * Connect Discovery 1.0), with the resources clients registered (RFC 9728 protected_resources).
 */
export async function discoveryAnswer(k: Pick<Keyfob, "config" | "store">): Promise<Answer> {
  try {
    return publicJson(openidConfiguration(k.config, await k.store.clients.registeredResources()), 3600);
  } catch (error) {
    return errorAnswer(toOAuthError(error), PUBLIC_CORS);
  }
}

/** Public metadata that caches may keep `maxAge` seconds. */
const publicJson = (body: unknown, maxAge: number): Answer => ({
  status: 200,
  headers: { "Content-Type": "application/json", "Cache-Control": `public, max-age=${maxAge}`, ...PUBLIC_CORS },
  body: JSON.stringify(body),
});
