import { SIGNING_ALG } from "./keys/keystore";
import { SUPPORTED_SCOPES } from "./oauth/scope";

/** OpenID Provider Metadata (OIDC Discovery 3) listing only what Keyfob implements. */
export function openidConfiguration(issuer: string) {
  return {
    issuer,
    jwks_uri: `${issuer}/keys`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [...SUPPORTED_SCOPES],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "nonce", "at_hash", "provider_id", "ethereum_address", "email_verified"],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
