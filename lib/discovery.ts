import { LOCALES } from "../i18n/locales";
import { RESPONSE_MODES } from "./actions/authorize";
import { GRANT_TYPES } from "./actions/token";
import { VEHICLE_TOKEN_EXCHANGE_PATH } from "./actions/vehicle-token-exchange";
import { SIGNING_ALGS } from "./keys/keystore";
import { ASSERTION_SIGNING_ALGS } from "./oauth/client-assertion";
import { DPOP_SIGNING_ALGS } from "./oauth/dpop";
import { ALL_SCOPES } from "./oauth/scope";
import type { Config } from "./config";

/** How a confidential client may authenticate (RFC 7591 names; lib/oauth/client-auth.ts). */
const CONFIDENTIAL_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"];

/** Where the vehicle tokens' keys are published, apart from the access tokens' (lib/vehicles). */
export const VEHICLE_JWKS_PATH = "/keys/vehicle";

/**
 * OpenID Provider Metadata (OIDC Discovery 3) listing only what Keyfob implements, and the vehicle
 * tokens' issuer, keys and the platform's exchange endpoint (metadata of Keyfob's own, RFC 8414 2
 * allows them).
 */
export function openidConfiguration(
  { issuerUrl: issuer, vehicleTokenIssuer }: Pick<Config, "issuerUrl" | "vehicleTokenIssuer">,
  protectedResources: string[] = [],
) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    revocation_endpoint: `${issuer}/token/revoke`,
    introspection_endpoint: `${issuer}/token/introspect`,
    jwks_uri: `${issuer}/keys`,
    end_session_endpoint: `${issuer}/session/end`,
    pushed_authorization_request_endpoint: `${issuer}/par`,
    /** Per client (its require_pushed_authorization_requests), not for all (RFC 9126 5). */
    require_pushed_authorization_requests: false,
    // Back-Channel Logout 1.0: logout tokens to each client's backchannel_logout_uri, always with sid.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    device_authorization_endpoint: `${issuer}/device/authorization`,
    response_types_supported: ["code"],
    response_modes_supported: RESPONSE_MODES,
    grant_types_supported: GRANT_TYPES,
    subject_types_supported: ["public"],
    /** Per client (its id_token_signed_response_alg, RS256 unless set); its access and logout tokens too. */
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    token_endpoint_auth_methods_supported: ["none", ...CONFIDENTIAL_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: ["none", ...CONFIDENTIAL_AUTH_METHODS],
    introspection_endpoint_auth_methods_supported: CONFIDENTIAL_AUTH_METHODS,
    // Client assertions (RFC 7523): a JWK Set's algorithms, a license's signers' and client_secret_jwt's (lib/oauth/client-assertion.ts).
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_SIGNING_ALGS,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_SIGNING_ALGS,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_SIGNING_ALGS,
    code_challenge_methods_supported: ["S256"],
    /** DPoP (RFC 9449 5.1): proofs at /token, /auth/web3/submit_challenge, /userinfo and the management API. */
    dpop_signing_alg_values_supported: DPOP_SIGNING_ALGS,
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ["none", "login", "consent", "select_account"],
    scopes_supported: [...ALL_SCOPES],
    claims_supported: [
      "iss",
      "sub",
      "aud",
      "iat",
      "exp",
      "jti",
      "nonce",
      "at_hash",
      "auth_time",
      "amr",
      "sid",
      "provider_id",
      "ethereum_address",
      "email",
      "email_verified",
      "preferred_username",
      "picture",
    ],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    /** RFC 9728 4: the resources (RFC 8707 `resource`) enabled clients registered, omitted while there is none. */
    ...(protectedResources.length > 0 && { protected_resources: protectedResources }),
    /** The hosted pages' languages, chosen by ui_locales, then Accept-Language. */
    ui_locales_supported: [...LOCALES],
    vehicle_token_issuer: vehicleTokenIssuer,
    vehicle_token_jwks_uri: `${issuer}${VEHICLE_JWKS_PATH}`,
    vehicle_token_exchange_endpoint: `${issuer}${VEHICLE_TOKEN_EXCHANGE_PATH}`,
  };
}
