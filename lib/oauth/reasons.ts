/**
 * Why Keyfob refused something a person gets to see: a stable code, with parameters. The hosted
 * pages word it through the message catalogs (`reasons.<code>` in messages/<locale>.json, with the
 * same parameters); API clients read the English below as the error_description. Rewording either
 * side breaks nothing: pages and tests match codes, never sentences.
 */
export const REASONS = {
  no_client_id: "The request has no client_id.",
  client_parameter_repeated: "client_id and redirect_uri must each be given once.",
  client_parameter_control_character: "client_id or redirect_uri contains a control character.",
  unknown_client: "This application is unknown or disabled.",
  unregistered_redirect_uri: "The redirect_uri is not registered for this application.",
  unknown_request_uri: "The request_uri is unknown, has expired, was already used or was pushed by another application.",
  invalid_id_token_hint: "The id_token_hint is not an ID token issued by Keyfob.",
  id_token_hint_other_client: "The client_id is not the one the id_token_hint was issued to.",
  unregistered_post_logout_redirect_uri: "The post_logout_redirect_uri is not registered for this application.",
  body_too_large: "the request body must not exceed {max} bytes",
  body_not_form: "the request body must be application/x-www-form-urlencoded",
  interaction_expired: "this login has expired or was already completed; start again from the application",
  admin_contract_signature: "smart-account signatures are not accepted for admin sign-in (ADMIN_CONTRACT_SIGNATURES)",
  // Wallet logins and links: the pages word them by kind (wrong message, clock, signature).
  siwe_not_eip4361: "the sign-in message is not an EIP-4361 message",
  siwe_control_character: "the sign-in message contains a control character",
  siwe_not_issued_here: "the sign-in message was not issued for this login",
  siwe_wrong_purpose: "the sign-in message was not written for this page (its Resources line names another purpose)",
  siwe_no_issued_at: "the sign-in message has no valid Issued At time",
  siwe_clock: "the sign-in message is too old or from the future",
  signature_format: "signature must be 0x-prefixed hex of at least 65 bytes",
  signature_malleable: "the signature is malleable: its s value is in the upper half of the curve order (EIP-2)",
  signature_mismatch: "the signature does not match the address, an enabled signer of the client, or a contract account",
  needs_new_login: "this sign-in needs a new login",
  wallet_link_expired: "the link request has expired; try again",
  wallet_link_contract: "a smart-account (contract) signature cannot link a wallet; sign with the wallet's own key",
  wallet_taken: "this wallet already belongs to an account",
  // The device authorization grant's page (/device).
  user_code_unknown: "this code is unknown, expired or already used; check the code on the device's screen",
  // Account self-service (/account).
  last_way_in: "this is the account's last way to sign in; add another before removing it",
  own_wallet: "the wallet whose address is the account's address cannot be unlinked",
  not_a_way_in: "this account has no such way to sign in",
  passkey_name: "a passkey's name must be 1 to {max} characters, without control characters",
  unknown_session: "this account has no live session with this id",
  unknown_consent: "this account has not allowed this application access",
  no_account: "this account no longer exists",
  delete_unconfirmed: "deleting the account needs its owner's confirmation",
  contract_session:
    "this session was signed in with a smart-account signature, which only the chain RPC vouched for; sign in with a wallet's own key, a passkey, Google or Apple to change the account's ways in or delete it",
  login_not_recent: "this change needs a recent login; sign in again, then try once more",
} as const;

export type ReasonCode = keyof typeof REASONS;
export type ReasonParams = Record<string, string | number>;
export type Reason = { code: ReasonCode; params?: ReasonParams };

/** The reason in English, its {placeholders} filled in: an error_description. */
export function describeReason({ code, params = {} }: Reason): string {
  return REASONS[code].replace(/\{(\w+)\}/g, (placeholder, name: string) =>
    Object.hasOwn(params, name) ? String(params[name]) : placeholder,
  );
}
