/**
 * The store's contract: every operation Keyfob runs on its database, declared here group by group
 * with the rule each keeps, and the rows they take and give as plain types (no Prisma type leaves
 * lib/store). lib/store/index.ts builds the object that satisfies it, one module per group; the
 * compiler checks each against its group here. test/store-contract.test.ts checks the rules that
 * concurrency, a pooler and caches could break, on direct PostgreSQL and through PgBouncer.
 *
 * The rules' words:
 * - one statement: the checks and the writes are one SQL statement, so nothing runs between a
 *   check and the write it guards, and a failure leaves nothing half done;
 * - single use: of concurrent calls for one row, on any instances sharing the database, exactly
 *   one gets it; the others get what a used row gives (false, or undefined);
 * - idempotent: calling it again with the same arguments changes nothing more and does not fail;
 * - in one transaction: its writes commit together or not at all.
 * When nothing matched, a lookup gives undefined and a change false (or a count of 0), unless its
 * comment says otherwise. Duplicate (./connection.ts) is thrown where a comment names it.
 */
import type { JWK } from "jose";

export type Store = {
  /** Flow A's challenges: a SIWE message issued for a state, consumed once by its signed submission. */
  challenges: ChallengeStore;
  /** Pushed authorization requests (RFC 9126): their parameters, used once by /authorize. */
  pushedRequests: PushedRequestStore;
  /** The hosted login's interactions: each completed once, by a login or a cancel. */
  interactions: InteractionStore;
  /** Consent grants: the scopes each account granted each client that requires consent. */
  consentGrants: ConsentGrantStore;
  /** Authorization codes: issued by a completed login, redeemed once at /token. */
  authorizationCodes: AuthorizationCodeStore;
  /** Device authorizations (RFC 8628): a user code entered once, approved or denied once, redeemed once. */
  deviceAuthorizations: DeviceAuthorizationStore;
  /** Passkey (WebAuthn) challenges: each answered once. */
  passkeyChallenges: PasskeyChallengeStore;
  /** Access tokens (issued_tokens) and refresh-token families. */
  tokens: TokenStore;
  /** Clients with their redirect URIs, post-logout redirect URIs, allowed origins and signers. */
  clients: ClientStore;
  /** Accounts with their identities and passkeys, login sessions, and the dashboard's sessions and admin roles. */
  accounts: AccountStore;
  /** Signing keys. */
  keys: SigningKeyStore;
  /** Audit events. */
  audit: AuditStore;
  /** Rate-limit counters. */
  limits: RateLimitStore;
  /** The back-channel logout outbox. */
  logouts: LogoutStore;
  /** DPoP proofs seen, so that a replay is refused on every instance. */
  dpopProofs: DpopProofStore;
  /** Client assertions seen (their jti), so that a replay is refused on every instance. */
  clientAssertions: DpopProofStore;
  /** Resolved ENS profiles. */
  ensProfiles: EnsProfileStore;
  /** Where the watcher of the vehicle contracts' events has got to, and which instance holds it. */
  chainCursors: ChainCursorStore;
  /**
   * Deletes what has ended, across the groups, in one transaction: expired single-use rows, token
   * records and sessions, spent rate-limit counters, DPoP proofs too old to be presented again,
   * expired ENS profiles and old audit events. Refresh tokens go by family: a family's rows are
   * deleted once its last token ended before the cutoff. Unused challenges beyond
   * `challengesTotal` go too, those of the callers holding the most first. How many rows went.
   */
  sweep(bounds: SweepBounds): Promise<number>;
  /**
   * Runs `work` in one transaction, on a store whose Prisma statements are that transaction's (an
   * admin change with its audit record, a key change under its lock): they commit together or not at
   * all. A transaction within one joins it. The hot path's statements, plain SQL on the pool, run
   * outside it: those of challenges, limits and dpopProofs, authorizationCodes.find and redeem,
   * deviceAuthorizations.enterUserCode, poll and redeem, tokens.recordClientToken, check and
   * rotateRefreshToken, clients.findForTokens and audit.insertBatch.
   */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * How the instance hears of key and client changes made by others: a listening connection of its
   * own on `directUrl`, or, behind a transaction pooler without one, polling on the pool.
   */
  changeFeed(directUrl: string | undefined): ChangeFeed;
  /** Asks the database for nothing: whether it answers (readiness). */
  ping(): Promise<void>;
  /** The pool's connections, for metrics. */
  poolStats(): PoolStats;
  close(): Promise<void>;
};

// Chain cursors.

export type ChainCursorStore = {
  /**
   * Takes or renews the lease of cursor `name` for `holder` until `until`, if nobody else holds an
   * unexpired one, in one statement; a cursor not there yet starts at `startAt`. The block it has
   * got to, or undefined when another instance holds it.
   */
  lease(name: string, holder: string, startAt: bigint, until: Date, now: Date): Promise<bigint | undefined>;
  /** Moves the cursor forward to `block`, if `holder` still holds it; false when it does not (or it was there already). */
  advance(name: string, holder: string, block: bigint): Promise<boolean>;
  /** Gives the lease up (the instance is closing), so another takes over at once. */
  release(name: string, holder: string): Promise<void>;
};

// Flow A's challenges.

export type ChallengeStore = {
  /**
   * Stores a challenge if its client exists, is enabled and has `domain` as a redirect URI, and the
   * caller (`ip`) has fewer than `perIp` unused, unexpired ones: one statement. Nothing else's
   * challenges are touched: a caller's are never pushed out by other callers' requests, whatever
   * client or address those name (the sweep bounds the total, trimming the callers that hold the
   * most first). Says which condition failed, if one did.
   */
  insert(challenge: NewChallenge, perIp: number, now: Date): Promise<ChallengeInsertRow>;

  /** A challenge with what its submission's checks need of its client, address and signers at `now`. */
  find(stateHash: string, now: Date): Promise<ChallengeRow | undefined>;

  /**
   * Consumes a state and records the token issued for it with its audit event, in one statement;
   * single use: of concurrent submissions exactly one gets true, and a token is never recorded
   * without its state consumed, nor without its token.issued event. The state is consumed only
   * while find's checks hold: its client enabled (and, if the client requires DPoP, `proven`), its
   * address not blocked, and the key that signed one of the client's active signers when `signer`
   * names it. False when any does not.
   */
  consume(stateHash: string, token: TokenRecord, caller: Caller, holds: { signer?: string; proven: boolean }, now: Date): Promise<boolean>;
};

export type NewChallenge = {
  stateHash: string;
  clientId: string;
  domain: string;
  address: string;
  scope: string;
  nonce?: string;
  message: string;
  expiresAt: Date;
  /** The caller's address bucket (addressBucket), when known. */
  ip?: string;
};

/** What storing a challenge found: whether the client exists and is enabled, has the domain, and whether the caller was under its cap (stored). */
/** Whether it was stored and why not; and the client's id_token_signed_response_alg, which its tokens will be signed with. */
export type ChallengeInsertRow = { enabled: boolean; domainRegistered: boolean; stored: boolean; signingAlg: SigningAlg };

export type ChallengeRow = {
  clientId: string;
  domain: string;
  address: string;
  scope: string;
  nonce: string | null;
  message: string;
  expiresAt: Date;
  usedAt: Date | null;
  clientEnabled: boolean;
  /** The client's token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  /** The alg the client's tokens are signed with (id_token_signed_response_alg). */
  idTokenSignedResponseAlg: SigningAlg;
  /** The address is a blocked account's, or a wallet linked to one. */
  accountBlocked: boolean;
  /** The client's signers that are enabled, unexpired and unrevoked at `now`. */
  signers: string[];
};

// Pushed authorization requests.

export type PushedRequestStore = {
  create(request: NewPushedRequest): Promise<void>;
  /** Uses up a client's unused, unexpired pushed request; single use: its parameters, or undefined when there was none. */
  consume(requestHash: string, clientId: string, now: Date): Promise<string | undefined>;
};

export type NewPushedRequest = { requestHash: string; clientId: string; parameters: string; expiresAt: Date };

// The hosted login's interactions.

export type InteractionStore = {
  /** Unfinished, unexpired logins of a caller (its address bucket), counted up to `cap`. */
  countPending(ip: string, cap: number, now: Date): Promise<number>;
  create(interaction: NewInteraction): Promise<InteractionRow>;
  find(id: string): Promise<InteractionRow | undefined>;
  /** An interaction with what the login page and its completion need of its client. */
  findWithClient(id: string): Promise<InteractionWithClientRow | undefined>;
  /**
   * Completes an unfinished, unexpired interaction (a login, a cancel, or a login that awaits the
   * consent page); single use: the row, or undefined when it was not.
   */
  complete(id: string, now: Date, outcome: "login" | "cancelled" | "consent"): Promise<InteractionRow | undefined>;
  /** Names the login session of an interaction awaiting consent, once (single use): false when it was named already or is not awaiting. */
  awaitConsent(id: string, sessionId: string): Promise<boolean>;
  /**
   * Settles an unexpired interaction awaiting consent of this login session: "login" (granted, a
   * code follows) or "cancelled" (declined); single use: the row, or undefined when it was not.
   */
  decideConsent(id: string, sessionId: string, now: Date, outcome: "login" | "cancelled"): Promise<InteractionRow | undefined>;
};

// Consent grants.

export type ConsentGrantStore = {
  find(accountId: string, clientId: string): Promise<ConsentGrantRow | undefined>;
  /** Adds scopes to an account's grant to a client (made if there is none), granted `now`; one statement, idempotent. */
  grant(accountId: string, clientId: string, scope: string[], now: Date): Promise<void>;
  /** An account's grants with their clients' names and logos, most recently granted first. */
  listForAccount(accountId: string): Promise<ConsentGrantWithClientRow[]>;
  /**
   * Revokes an account's grant to a client at `now`, in one statement: deletes it, and ends what the
   * grant allowed that is not redeemed yet (the client's unused codes for the account, expired; its
   * approved device authorizations, denied), so a code issued before the revocation gets no tokens
   * after it. False when there was no grant. The refresh tokens are TokenStore.revokeRefreshFamilies'.
   */
  revoke(accountId: string, clientId: string, now: Date): Promise<boolean>;
};

export type ConsentGrantRow = { accountId: string; clientId: string; scope: string; grantedAt: Date };

export type ConsentGrantWithClientRow = ConsentGrantRow & { clientName: string; clientLogoUrl: string | null };

/** A hosted login's interaction (a device authorization's is created by DeviceAuthorizationStore.enterUserCode). */
export type NewInteraction = Pick<InteractionRow, "id" | "clientId" | "redirectUri" | "scope" | "expiresAt"> &
  Partial<
    Omit<
      InteractionRow,
      "id" | "clientId" | "redirectUri" | "scope" | "expiresAt" | "completedAt" | "outcome" | "deviceCodeHash" | "consentSession"
    >
  >;

/** A hosted login: the validated authorization request it completes, and how it ended. */
export type InteractionRow = {
  id: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: string | null;
  loginHint: string | null;
  maxAge: number | null;
  hintAccount: string | null;
  /** The nonce of the page's wallet login (unique). */
  walletNonce: string | null;
  /** The caller's address bucket. */
  ip: string | null;
  uiLocales: string | null;
  /** The thumbprint of the DPoP key the code is bound to (RFC 9449 10), if the request named one. */
  dpopJkt: string | null;
  /** The request's resource indicator (RFC 8707), if it named one. */
  resource: string | null;
  expiresAt: Date;
  completedAt: Date | null;
  /** "login" or "cancelled" once completed; "consent" while a login awaits the consent page. */
  outcome: string | null;
  /** The device authorization the login approves, if it is one's. */
  deviceCodeHash: string | null;
  /** Awaiting consent: the id of the login session that logged in. */
  consentSession: string | null;
};

export type InteractionWithClientRow = InteractionRow & {
  client: { name: string; logoUrl: string | null; enabled: boolean; requireConsent: boolean; refreshTokensAllowed: boolean };
};

// Authorization codes, and what redeeming a login's grant (a code, an approved device code) takes and gives.

export type AuthorizationCodeStore = {
  create(code: NewAuthorizationCode): Promise<void>;
  find(codeHash: string): Promise<AuthorizationCodeRow | undefined>;
  /** Uses an unused, unexpired code without issuing tokens (the dashboard's own sign-in); single use: false when it was not. */
  use(codeHash: string, now: Date): Promise<boolean>;
  /**
   * Redeems an authorization code in one statement, before its tokens are signed: the code is used
   * only if it is this client's, unused, unexpired, for this redirect URI and this PKCE verifier
   * (or none, for a confidential client), bound to no DPoP key or to the proof's, its account
   * unblocked, and its client still enabled with the secret it authenticated with (the client may
   * come from a cache, lib/clients/cache.ts). The same statement records the access token with its
   * audit event, the client as one that got tokens in the code's login session (back-channel
   * logout; a session that ended meanwhile queues the client's logout token at once) and, when
   * offline_access is granted (the client allowed refresh tokens), the first refresh token of a new
   * family. Single use: of concurrent redemptions exactly one gets the grant; the token remembers
   * its code, so reusing the code finds it to revoke. Undefined when any check fails.
   */
  redeem(redemption: CodeRedemption, caller: Caller, now: Date): Promise<RedeemedGrant | undefined>;
};

export type NewAuthorizationCode = {
  codeHash: string;
  clientId: string;
  redirectUri: string;
  accountId: string;
  connector: string;
  scope: string;
  nonce?: string | null;
  codeChallenge?: string | null;
  email?: string | null;
  emailVerified?: boolean;
  authTime?: Date | null;
  amr?: string | null;
  sessionId?: string | null;
  dpopJkt?: string | null;
  resource?: string | null;
  expiresAt: Date;
};

/** An authorization code as the exchange reads it. */
export type AuthorizationCodeRow = {
  clientId: string;
  redirectUri: string;
  accountId: string;
  connector: string;
  scope: string;
  nonce: string | null;
  codeChallenge: string | null;
  email: string | null;
  emailVerified: boolean;
  authTime: Date | null;
  amr: string | null;
  sessionId: string | null;
  /** The DPoP key (thumbprint) the authorization request bound the code to, if any (RFC 9449 10). */
  dpopJkt: string | null;
  /** The authorization request's resource (RFC 8707), if any: the audience of the code's access tokens. */
  resource: string | null;
  expiresAt: Date;
  usedAt: Date | null;
};

/** What redeeming a login's grant (a code, an approved device code) checks of its client and records. */
export type GrantRedemption = {
  clientId: string;
  /** The secret the client authenticated with, checked again as the statement runs; undefined when not checked. */
  secretHash?: string | null;
  token: Pick<TokenRecord, "jti" | "expiresAt">;
  /**
   * The refresh family stored when offline_access is granted: its first token, its ends, and the
   * DPoP key a public client's family is bound to (RFC 9449 5); none, none granted.
   */
  refresh?: { tokenHash: string; familyId: string; expiresAt: Date; familyExpiresAt: Date; dpopJkt: string | null };
  /** A grant that recorded no login time was issued right after the login: its end less this lifetime (seconds). */
  codeTtl: number;
};

/** A code redemption at /token: what the code must match besides. */
export type CodeRedemption = GrantRedemption & {
  codeHash: string;
  redirectUri: string;
  /** What the code's challenge must be for the request's code_verifier (expectedCodeChallenge). */
  verifierChallenge: string | null;
  /** Only a confidential client redeems a code issued without a code challenge. */
  confidential: boolean;
  /** The key of the request's DPoP proof: a code bound to a key (dpop_jkt, RFC 9449 10) needs it. */
  proofJkt: string | null;
  /** The resource the token request names (RFC 8707): only a code authorized for it is redeemed; null: any. */
  resource: string | null;
};

/** A redeemed grant: what its tokens say, the scope granted, and whether the refresh family was stored. */
export type RedeemedGrant = Pick<
  AuthorizationCodeRow,
  "accountId" | "connector" | "scope" | "nonce" | "email" | "emailVerified" | "authTime" | "amr" | "sessionId" | "resource"
> & {
  grantedScope: string;
  offlineAccess: boolean;
};

// Device authorizations (RFC 8628).

export type DeviceAuthorizationStore = {
  /** Duplicate when the device code or the user code is taken. */
  create(authorization: NewDeviceAuthorization): Promise<void>;
  /** The pending, unexpired device authorization of a user code, its client enabled and allowed the grant: what /device shows of it. */
  findByUserCode(userCodeHash: string, now: Date): Promise<UserCodeRow | undefined>;
  /**
   * The user confirmed a user code: it is used up (a user code works once) and the hosted login's
   * interaction for its device authorization is created, in one statement; single use: of two
   * confirmations only one gets an interaction. Undefined when the code is unknown, used, expired,
   * or its client is disabled or no longer allowed the grant.
   */
  enterUserCode(userCodeHash: string, interaction: DeviceInteraction, now: Date): Promise<{ id: string } | undefined>;
  /** Denies the pending, unexpired device authorization of a user code, using the code up: its client, or undefined when there was none. */
  declineUserCode(userCodeHash: string, now: Date): Promise<string | undefined>;
  /** Ends a pending, unexpired device authorization, once: approved by a login, or denied; false when it was not pending. */
  settle(deviceCodeHash: string, now: Date, outcome: { approved: DeviceApproval } | { denied: true }): Promise<boolean>;
  /**
   * Records a device's poll and reads its device authorization, in one statement: concurrent polls
   * (on any instance) each see the one before. A poll sooner than the interval after the previous
   * one adds 5 seconds to it (RFC 8628 3.5, slow_down).
   */
  poll(deviceCodeHash: string, now: Date): Promise<DevicePollRow | undefined>;
  /**
   * Redeems an approved device authorization as AuthorizationCodeStore.redeem redeems a code, in one
   * statement before the tokens are signed; single use: of concurrent polls exactly one gets the
   * grant. Its token is recorded under the device code's hash, and its client in the login session
   * that approved it, which must not have ended (logout, revocation, an unlinked way in).
   * offline_access needs the client's device_flow_offline_access besides refresh tokens: a device a
   * person was tricked into approving does not keep access for good unless an admin chose so.
   */
  redeem(deviceCodeHash: string, redemption: GrantRedemption, caller: Caller, now: Date): Promise<RedeemedGrant | undefined>;
};

export type NewDeviceAuthorization = {
  deviceCodeHash: string;
  userCodeHash: string;
  clientId: string;
  scope: string;
  /** Seconds between polls, until a poll too soon lengthens it. */
  pollInterval: number;
  createdAt: Date;
  expiresAt: Date;
  requestIp: string | null;
  requestUserAgent: string | null;
  /** The resource the device asked for (RFC 8707): its access tokens' audience; null: none. */
  resource: string | null;
};

/** A pending device authorization as /device shows it, with its client. */
export type UserCodeRow = {
  scope: string;
  createdAt: Date;
  requestIp: string | null;
  requestUserAgent: string | null;
  expiresAt: Date;
  client: { name: string; logoUrl: string | null };
};

/** The hosted login's interaction that entering a user code creates (its client and scope are the device authorization's). */
export type DeviceInteraction = {
  id: string;
  redirectUri: string;
  walletNonce: string;
  ip: string | null;
  /** Not after the device authorization's end, whichever is sooner. */
  expiresAt: Date;
  uiLocales: string | null;
};

/** A device authorization as its device's poll finds it (RFC 8628 3.4), after the poll was recorded. */
export type DevicePollRow = {
  clientId: string;
  scope: string;
  status: "pending" | "approved" | "denied";
  accountId: string | null;
  connector: string | null;
  email: string | null;
  emailVerified: boolean;
  authTime: Date | null;
  amr: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  /** The interval from now on (with slow_down's 5 seconds when this poll came too soon). */
  interval: number;
  /** The poll came sooner than the interval after the previous one (slow_down). */
  tooSoon: boolean;
};

/** What approves a device authorization: the login, as the tokens will tell it. */
export type DeviceApproval = {
  accountId: string;
  connector: string;
  email: string | null;
  emailVerified: boolean;
  authTime: Date;
  amr: string;
  /** The login session that approved it (its id_hash): the device's tokens are issued in it. */
  sessionId: string;
};

// Passkey challenges.

export type PasskeyChallengeStore = {
  /** Stores a passkey challenge, deleting those that expired before `sweepBefore` on the way. */
  create(challenge: NewPasskeyChallenge, sweepBefore: Date): Promise<void>;
  /**
   * Uses up a passkey challenge issued for `purpose` and, when given, this login or account, unused
   * and unexpired; single use: of two answers to one challenge only the first gets the row.
   */
  consume(
    challengeHash: string,
    purpose: string,
    binding: { interactionId?: string; accountId?: string },
    now: Date,
  ): Promise<PasskeyChallengeRow | undefined>;
};

export type NewPasskeyChallenge = {
  challengeHash: string;
  /** "register", "add" or "login". */
  purpose: string;
  /** The login it was issued for, if any. */
  interactionId?: string | null;
  /** The account it was issued for (adding a passkey), if any. */
  accountId?: string | null;
  userHandle?: string | null;
  expiresAt: Date;
};

export type PasskeyChallengeRow = {
  challengeHash: string;
  purpose: string;
  interactionId: string | null;
  accountId: string | null;
  userHandle: string | null;
  expiresAt: Date;
  usedAt: Date | null;
};

// Access tokens and refresh families.

export type TokenStore = {
  /**
   * Records a client_credentials token (RFC 6749 4.4) with its audit event, in one statement, if
   * the client is, at the moment it runs, still enabled, still allowed the management API with the
   * token's scopes, and still has the secret the request was authenticated with (it may have been
   * read from the cache). False when any of these fails.
   */
  recordClientToken(
    clientId: string,
    secretHash: string,
    scopes: string[],
    token: TokenRecord,
    caller: Caller,
    now: Date,
  ): Promise<boolean>;
  /**
   * Records a license's client_credentials token (Flow A's for the signature its assertion carried,
   * lib/actions/client-credentials.ts) with its audit event, in one statement, if at the moment it
   * runs the client is enabled and registered for private_key_jwt, `holds.signer` (when given) is
   * still one of its active signers, a DPoP proof came when the client requires one, and the
   * account of the token's address is not blocked: what consuming a Flow A state checks. False
   * when any of these fails.
   */
  recordLicenseToken(
    clientId: string,
    token: TokenRecord,
    caller: Caller,
    holds: { signer?: string; proven: boolean },
    now: Date,
  ): Promise<boolean>;
  /**
   * A presented access token's row: its client, whether it is active (unrevoked, unexpired, its
   * client not deleted: an issuance racing the deletion can leave its row behind), and whether the
   * key `kid` that signed it is still in use (unrevoked, published), in one round trip.
   */
  check(jti: string, kid: string, now: Date): Promise<AccessTokenCheckRow | undefined>;
  /**
   * Revokes every token issued from an authorization code (RFC 6749 4.1.2, code reuse): its access
   * token, and the refresh-token family started with it (every rotation, and the access tokens they
   * were issued with). Returns how many access tokens were revoked.
   */
  revokeTokensOfCode(codeHash: string, now: Date): Promise<number>;
  /**
   * Records a vehicle token exchanged for the access token `token.subjectJti` (RFC 8693) with its
   * `token.exchanged` audit event, in one statement, if at the moment it runs that token is live
   * (unrevoked, unexpired, not a vehicle token itself) and `clientId`'s, the Flow A signer it was
   * issued through (if any) still enabled, its holder not blocked, and the client enabled and
   * allowed token exchange. The record takes the subject's holder, login session and refresh
   * family, so that ending any of them ends the vehicle token too. False when a check fails.
   */
  recordVehicleToken(clientId: string, token: VehicleTokenRecord, caller: Caller, now: Date): Promise<boolean>;
  /**
   * Revokes the live vehicle tokens of `vehicle` decided on a block before `block` (only those of
   * `clientId` holding `privilege`, when given): after a transfer, or a privilege changed. A token
   * decided on no block (the development policy) counts as before. Returns how many.
   */
  revokeVehicleTokens(selector: VehicleTokenSelector, now: Date): Promise<number>;
  /** Revokes an access token by its jti (of `clientId`, when given); idempotent. */
  revoke(jti: string, now: Date, clientId?: string): Promise<void>;
  find(jti: string): Promise<Pick<IssuedTokenRow, "clientId" | "userId"> | undefined>;
  /** Revokes active tokens: one by jti (of `userId` when given), or those `target` selects. Returns how many. */
  revokeActive(target: { jti?: string; userId?: string } & TokenSelector, now: Date): Promise<number>;
  /** A page of active tokens, newest first. */
  activePage(selector: TokenSelector, skip: number, take: number, now: Date): Promise<IssuedTokenRow[]>;
  countActive(selector: TokenSelector, now: Date): Promise<number>;
  /** A stored refresh token with what the checks need of its client. */
  findRefreshToken(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  /**
   * Uses a refresh token, in one statement: marks it used, stores its successor (same family and
   * grant, a new idle end) and records the access token issued with it, with its audit event. The
   * row must still be live, its account existing and unblocked, and its client enabled, allowed
   * refresh tokens and (when `presented.secretHash` is given, the client having been read from a
   * cache) still holding the secret the request was authenticated with, when the statement runs.
   * Single use: of concurrent uses of one token exactly one gets true; the others find it used (reuse).
   */
  rotateRefreshToken(
    presented: { tokenHash: string; clientId: string; secretHash?: string | null },
    successor: { tokenHash: string; expiresAt: Date },
    token: Pick<TokenRecord, "jti" | "scope" | "expiresAt">,
    caller: Caller,
    now: Date,
  ): Promise<boolean>;
  /**
   * Records the access token issued to a use of a refresh token already used within
   * REFRESH_TOKEN_REUSE_GRACE, with its audit event, in one statement: only while the successor
   * the first use stored (by `successorHash`) is itself usable as rotateRefreshToken requires of a
   * presented token. False otherwise (the successor used or revoked since, the family ended).
   */
  recordReuseWithinGrace(
    successorHash: string,
    presented: { clientId: string; secretHash?: string | null },
    token: Pick<TokenRecord, "jti" | "scope" | "expiresAt">,
    caller: Caller,
    now: Date,
  ): Promise<boolean>;
  /**
   * Revokes refresh-token families and every access token issued with them; a rotation that
   * commits meanwhile leaves no live successor behind. Throws when `selector` names no family,
   * client or account.
   */
  revokeRefreshFamilies(selector: FamilySelector, now: Date): Promise<FamilyRevocation>;
  /** A family's client and account (from any of its tokens). */
  findFamily(familyId: string): Promise<Pick<RefreshTokenRow, "clientId" | "accountId"> | undefined>;
  /** A page of live refresh tokens (one per live grant), newest rotation first. */
  liveGrantPage(selector: GrantSelector, skip: number, take: number, now: Date): Promise<LiveGrantRow[]>;
  countLiveGrants(selector: GrantSelector, now: Date): Promise<number>;
  /** Per family: when it began (its first token) and how many tokens it has had. */
  familyHistories(familyIds: string[]): Promise<FamilyHistoryRow[]>;
};

/** What to record of an access token, so it can be revoked, introspected and listed. */
export type TokenRecord = { jti: string; userId: string; connector: string; scope: string; expiresAt: Date };

/** What to record of a vehicle token (lib/vehicles): its vehicle's DID, privilege ids, the block its decision was read at, and the access token exchanged. */
export type VehicleTokenRecord = Pick<TokenRecord, "jti" | "scope" | "expiresAt"> & {
  subjectJti: string;
  vehicle: string;
  privileges: number[];
  chainBlock?: bigint;
};

export type VehicleTokenSelector = { vehicle: string; block: bigint; clientId?: string; privilege?: number };

export type AccessTokenCheckRow = { clientId: string; active: boolean; keyValid: boolean };

/** An access token's record (without the code it was issued from). */
export type IssuedTokenRow = {
  jti: string;
  clientId: string;
  /** The account, or the wallet of a Flow A token, or the client itself (client_credentials). */
  userId: string;
  connector: string;
  scope: string;
  /** The refresh family it was issued with, if any. */
  refreshFamily: string | null;
  /** The login session it was issued in, if any. */
  sessionId: string | null;
  /** A vehicle token's vehicle (its asset DID) and privilege ids; null for other tokens. */
  vehicle: string | null;
  vehiclePrivileges: number[];
  /** A vehicle token's access token exchanged for it. */
  subjectJti: string | null;
  issuedAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
};

/** Which active tokens: of a client, of some holders (an account and its wallets), or all; with `vehicle`, vehicle tokens only. */
export type TokenSelector = { clientId?: string; userIds?: string[]; vehicle?: boolean };

/** Which refresh tokens to revoke: one family, or every family of a client and/or an account. */
export type FamilySelector = { familyId?: string; clientId?: string; accountId?: string };

export type FamilyRevocation = {
  /** Families that still had a usable token. */
  families: number;
  refreshTokens: number;
  accessTokens: number;
};

/** Whose live refresh grants: of a client, an account, both, or all. */
export type GrantSelector = { clientId?: string; accountId?: string };

/** A stored refresh token, with what the checks need of its client. */
export type RefreshTokenRow = {
  tokenHash: string;
  familyId: string;
  clientId: string;
  accountId: string;
  connector: string;
  scope: string;
  email: string | null;
  emailVerified: boolean;
  authTime: Date;
  /** Space separated; empty when the login recorded none. */
  amr: string;
  issuedAt: Date;
  expiresAt: Date;
  familyExpiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  /** The DPoP key (its thumbprint) a public client's family is bound to (RFC 9449 5); null: unbound. */
  dpopJkt: string | null;
  sessionId: string | null;
  /** The grant's resource (RFC 8707): the audience of its access tokens; null: none. */
  resource: string | null;
  client: { enabled: boolean; refreshTokensAllowed: boolean; resources: string[] };
};

/** A live grant as listed: its usable refresh token. */
export type LiveGrantRow = Pick<
  RefreshTokenRow,
  "familyId" | "clientId" | "accountId" | "connector" | "scope" | "issuedAt" | "expiresAt" | "familyExpiresAt"
>;

export type FamilyHistoryRow = { familyId: string; grantedAt: Date | null; tokens: number };

// Clients.

export type ClientStore = {
  /** Every resource (RFC 8707) an enabled client registers, each once, sorted: discovery's protected_resources. */
  registeredResources(): Promise<string[]>;
  /** A new client; Duplicate when the id is taken. */
  create(client: NewClient): Promise<ClientRow>;
  find(id: string): Promise<ClientRow | undefined>;
  /** A client with whether `redirectUri` is one of its redirect URIs. */
  findWithRedirectUri(id: string, redirectUri: string): Promise<(ClientRow & { redirectUriRegistered: boolean }) | undefined>;
  /** A client with whether `uri` is one of its post-logout redirect URIs. */
  findWithPostLogoutUri(id: string, uri: string): Promise<(ClientRow & { postLogoutUriRegistered: boolean }) | undefined>;
  /** What the token endpoints and CORS need of a client, in one round trip (the client cache's load). */
  findForTokens(id: string): Promise<TokenClientRow | undefined>;
  /** A client with its lists, signers newest first. */
  detail(id: string): Promise<ClientDetailRow | undefined>;
  /** Every client with its lists, oldest first (the command line's list). */
  listDetailed(): Promise<ClientDetailRow[]>;
  /** A page of clients whose id or name contains `search` (any case), newest first, with how many redirect URIs and active signers each has. */
  summaryPage(search: string | undefined, skip: number, take: number): Promise<ClientSummaryRow[]>;
  count(search?: string): Promise<number>;
  /**
   * Changes some settings, in one transaction; returns them before and after. `check` sees them
   * before, with the secret's hash, and may refuse the change (by throwing) in the transaction.
   */
  update(
    id: string,
    changes: Partial<ClientSettings>,
    check: (before: ClientSettings & { secretHash: string | null }) => void,
  ): Promise<{ before: ClientSettings; after: ClientSettings }>;
  /** A new secret; `previous` keeps the one it replaces valid for a while (null: it stops at once). */
  setSecretHash(id: string, secretHash: string, previous?: PreviousSecret | null, sealed?: string | null): Promise<void>;
  /** Sets how the client authenticates and its keys; keeps the sealed secret only for client_secret_jwt. */
  setAuthentication(id: string, authentication: Omit<ClientAuthentication, "secretSealed">): Promise<void>;
  /** Ends a rotation's overlap now: the previous secret stops working. False when none was still valid at `now`. */
  endSecretOverlap(id: string, now: Date): Promise<boolean>;
  /**
   * Deletes the client with what is its, in one statement: the rows its foreign keys cascade to and
   * those that carry its id without one (its token records, session links and challenges:
   * prisma/schema.prisma says why).
   */
  delete(id: string): Promise<void>;
  /** Registers the dashboard's own client, enabled, with `redirectUri`; idempotent. */
  ensure(id: string, name: string, redirectUri: string): Promise<void>;
  /** Idempotent: the row, new or as it was. */
  addRedirectUri(clientId: string, uri: string): Promise<ClientUriRow>;
  /** Removes a redirect URI; false when the client had none such. */
  removeRedirectUri(clientId: string, uri: string): Promise<boolean>;
  /** Idempotent: the row, new or as it was. */
  addPostLogoutRedirectUri(clientId: string, uri: string): Promise<ClientUriRow>;
  removePostLogoutRedirectUri(clientId: string, uri: string): Promise<boolean>;
  /** Idempotent: the row, new or as it was. */
  addAllowedOrigin(clientId: string, origin: string): Promise<AllowedOriginRow>;
  removeAllowedOrigin(clientId: string, origin: string): Promise<boolean>;
  findSigner(clientId: string, address: string): Promise<SignerRow | undefined>;
  /** Enables a signer, anew if it was revoked or expired. */
  enableSigner(clientId: string, address: string, expiresAt: Date | null, now: Date): Promise<SignerRow>;
  /** Revokes an active signer; false when there was none. */
  revokeSigner(clientId: string, address: string, now: Date): Promise<boolean>;
};

export type NewClient = { id: string; name: string; logoUrl: string | null };

/** The settings of a client that can change after it is created. */
export type ClientSettings = {
  name: string;
  logoUrl: string | null;
  /** PKCE for a confidential client too (public clients always need it). */
  requirePkce: boolean;
  /** May introspect other clients' tokens. */
  resourceServer: boolean;
  /** May ask for offline_access and get refresh tokens. */
  refreshTokensAllowed: boolean;
  /** Disabled: both flows refuse the client at once. */
  enabled: boolean;
  /** May use the management API: a client_credentials token. Confidential clients only. */
  managementApi: boolean;
  /** The management API scopes it may get (lib/admin/scopes.ts, which the admin actions check). */
  managementScopes: string[];
  /** Authorization requests only through PAR (RFC 9126 6). */
  requirePushedAuthorizationRequests: boolean;
  /** Where logout tokens are POSTed (Back-Channel Logout 1.0); null: none. */
  backchannelLogoutUri: string | null;
  /** The client needs `sid` in ID and logout tokens. */
  backchannelLogoutSessionRequired: boolean;
  /** May use the device authorization grant (RFC 8628). */
  deviceFlow: boolean;
  /** Its device grants may carry offline_access (a refresh token), if it is allowed refresh tokens too. */
  deviceFlowOfflineAccess: boolean;
  /** May exchange its access tokens for vehicle tokens (RFC 8693, lib/vehicles). */
  tokenExchange: boolean;
  /** Token requests must carry a DPoP proof: its access tokens are always bound to a key (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  /** The resource servers it may get access tokens for (RFC 8707 resource indicators, lib/oauth/resource.ts). */
  resources: string[];
  /** A third-party client: the hosted login asks the user's consent to scopes not granted it yet. */
  requireConsent: boolean;
  /** The alg its ID, access and logout tokens are signed with (RFC 7591 id_token_signed_response_alg): one of SIGNING_ALGS, which a CHECK holds it to. */
  idTokenSignedResponseAlg: string;
};

export type ClientRow = ClientSettings &
  ClientAuthentication & {
    id: string;
    /** SHA-256 of the client secret (confidential clients), else null. */
    secretHash: string | null;
    /** The secret the last rotation replaced, while a rotation's overlap keeps it valid (PreviousSecret). */
    previousSecretHash: string | null;
    previousSecretExpiresAt: Date | null;
    createdAt: Date;
  };

/** A client with its lists: URIs and origins in the order they were added. */
export type ClientDetailRow = ClientRow & {
  redirectUris: ClientUriRow[];
  postLogoutRedirectUris: ClientUriRow[];
  allowedOrigins: AllowedOriginRow[];
  signers: SignerRow[];
};

/** A client as the dashboard's list and the management API's list show it. */
export type ClientSummaryRow = {
  id: string;
  name: string;
  logoUrl: string | null;
  enabled: boolean;
  createdAt: Date;
  redirectUriCount: number;
  /** Signers not revoked (expired ones count). */
  activeSignerCount: number;
};

/** A redirect URI or a post-logout redirect URI of a client. */
export type ClientUriRow = { clientId: string; uri: string; createdAt: Date };

export type AllowedOriginRow = { clientId: string; origin: string; createdAt: Date };

/** A key that may sign a client's Flow A challenges. */
export type SignerRow = { clientId: string; address: string; enabledAt: Date; expiresAt: Date | null; revokedAt: Date | null };

/** What the token endpoints and CORS need of a client (lib/clients/cache.ts keeps them in memory). */
export type TokenClientRow = ClientAuthentication & {
  id: string;
  enabled: boolean;
  /** SHA-256 of the client secret (confidential clients), else null. */
  secretHash: string | null;
  /** The secret the last rotation replaced and until when it is still accepted (a rotation's overlap), if any. */
  previousSecret: PreviousSecret | null;
  resourceServer: boolean;
  refreshTokensAllowed: boolean;
  /** The management API scopes the client may get (client_credentials); none unless an admin allowed it the API. */
  managementScopes: string[];
  /** Token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  /** May exchange its access tokens for vehicle tokens (RFC 8693, lib/vehicles). */
  tokenExchange: boolean;
  /** Its registered resources (RFC 8707). */
  resources: string[];
  /** The alg its ID and access tokens are signed with (id_token_signed_response_alg). */
  idTokenSignedResponseAlg: SigningAlg;
  /** Browser origins allowed for the client: its redirect URIs' origins and the extra allowed origins. */
  origins: ReadonlySet<string>;
};

export type PreviousSecret = { hash: string; expiresAt: Date };

/** How a client authenticates besides a secret: client assertions (RFC 7523) and their keys. */
export type ClientAuthentication = {
  /** private_key_jwt or client_secret_jwt, or null: its secret when it has one, else none (RFC 7591 token_endpoint_auth_method). */
  tokenEndpointAuthMethod: string | null;
  /** Its public keys (a JWK Set, as registered), or null. */
  jwks: unknown;
  /** Where its JWK Set is fetched, or null. */
  jwksUri: string | null;
  /** client_secret_jwt: its secret, encrypted under KEYFOB_SECRET (lib/keys/encryption.ts seal); else null. */
  secretSealed: string | null;
};

// Accounts, identities, passkeys, login sessions, the dashboard's sessions and admin roles.

export type AccountStore = {
  find(id: string): Promise<AccountRow | undefined>;
  /** A page of accounts matching `query`, newest first, with their identities; and how many match. */
  search(query: AccountQuery, skip: number, take: number): Promise<{ items: AccountView[]; total: number }>;
  count(): Promise<number>;
  /** One account with its identities. */
  view(id: string): Promise<AccountView | undefined>;
  /** The accounts (at most `take`) with an identity of this email, in any case. */
  withEmail(email: string, take: number): Promise<string[]>;
  /** Whose tokens are the account's: its own id, and its linked wallets (Flow A tokens name the wallet). */
  holders(accountId: string): Promise<string[]>;
  /**
   * Blocks an account and, in the same transaction, revokes its login sessions (queueing their
   * back-channel logouts), unredeemed codes and approved device authorizations, access tokens (its
   * wallets' too) and refresh tokens.
   */
  block(accountId: string, now: Date): Promise<{ revokedTokens: number; revokedSessions: number }>;
  unblock(accountId: string): Promise<void>;
  /**
   * Deletes an account with its identities and login sessions, in one transaction that first
   * revokes what it holds (queueing back-channel logouts for its live sessions) and removes its
   * admin role, and deletes its login sessions with the clients recorded in them; undefined when
   * there is no such account.
   */
  delete(accountId: string, now: Date): Promise<AccountDeletion | undefined>;

  findIdentity(key: IdentityKey): Promise<IdentityRow | undefined>;
  /** Records a login of a known identity, with its email when the provider sent one. */
  touchIdentity(key: IdentityKey, now: Date, email?: { email: string; emailVerified: boolean }): Promise<void>;
  /** An account (unless it exists) and a new identity of it, in one transaction; Duplicate when the identity exists. */
  createWithIdentity(identity: NewIdentity): Promise<void>;
  /** A new identity of an existing account; Duplicate when it exists. */
  addIdentity(identity: { provider: string; subject: string; accountId: string }): Promise<void>;
  /** An account's identities, oldest first: what /account lists. */
  identities(accountId: string): Promise<IdentitySummaryRow[]>;
  /**
   * Holds the account's row until the transaction ends (on a transaction's store), so changes to
   * its ways in wait for each other; false when there is no such account.
   */
  lockAccount(accountId: string): Promise<boolean>;
  /** The ways into an account: its identities other than its passkey identity, and its passkeys. */
  waysIn(accountId: string): Promise<number>;
  /** Deletes an identity of the account; false when it has none such. */
  removeIdentity(accountId: string, key: IdentityKey): Promise<boolean>;
  /** The subject of the account's first identity of `provider`. */
  identitySubject(accountId: string, provider: string): Promise<string | undefined>;
  /** The verified emails of the account's identities. */
  verifiedEmails(accountId: string): Promise<string[]>;
  /** The email of one of the account's identities, if any has one. */
  anyEmail(accountId: string): Promise<string | undefined>;

  /** A new passkey; Duplicate when its credential id is registered. */
  addPasskey(passkey: NewPasskey): Promise<void>;
  findPasskey(id: string): Promise<PasskeyRow | undefined>;
  /** What registration options exclude: the account's passkeys' ids and transports. */
  passkeyIds(accountId: string): Promise<Pick<PasskeyRow, "id" | "transports">[]>;
  /** Records a passkey's use; its counter only moves forward. */
  usedPasskey(id: string, use: { counter: bigint; backedUp: boolean; deviceType: string }, now: Date): Promise<void>;
  /** An account's passkeys, newest first. */
  passkeys(accountId: string): Promise<PasskeySummaryRow[]>;
  /** Names a passkey of the account; false when it has none of this id. */
  renamePasskey(accountId: string, id: string, name: string): Promise<boolean>;
  /** Deletes a passkey of the account; false when it has none of this id. */
  removePasskey(accountId: string, id: string): Promise<boolean>;

  createSession(session: NewLoginSession): Promise<LoginSessionRow>;
  /** A live session (unrevoked, before its end, seen after `idleSince`, its account unblocked), marked seen now. */
  useSession(idHash: string, now: Date, idleSince: Date): Promise<LoginSessionRow | undefined>;
  findSession(idHash: string): Promise<LoginSessionRow | undefined>;
  /**
   * Revokes the unrevoked sessions of an account (one of them, by id), or the one of `idHash`, with
   * their back-channel logouts queued and the device authorizations they approved withdrawn, in
   * one transaction; returns how many.
   */
  revokeSessions(target: { accountId?: string; idHash?: string }, now: Date): Promise<number>;
  /**
   * Ends the sessions that ran out unrevoked (past their end, or not seen since `idleSince`) as
   * revokeSessions ends one, so their clients are told of the end too, however it came; returns
   * how many.
   */
  endRunOutSessions(now: Date, idleSince: Date): Promise<number>;
  /**
   * Ends the account's sessions logged in through a way in: an identity, or one passkey (and a
   * passkey session that does not name its passkey, from before sessions did), with their
   * back-channel logouts; and revokes what was issued in any session through it, ended earlier
   * or now: unredeemed codes, approved device authorizations, access tokens and refresh families.
   * In one transaction. Returns how many sessions ended and access tokens were revoked.
   */
  endSessionsThrough(
    accountId: string,
    wayIn: { identity: IdentityKey } | { passkey: string },
    now: Date,
  ): Promise<{ sessions: number; tokens: number }>;
  /** An account's live sessions, most recently used first. */
  liveSessions(accountId: string, now: Date, idleSince: Date): Promise<LiveSessionRow[]>;

  createAdminSession(session: NewAdminSession): Promise<void>;
  /** A live dashboard session: unrevoked, before its end, its login session unrevoked and its account unblocked. */
  liveAdminSession(idHash: string, now: Date): Promise<Pick<AdminSessionRow, "idHash" | "accountId"> | undefined>;
  findAdminSession(idHash: string): Promise<AdminSessionRow | undefined>;
  /** Ends unrevoked dashboard sessions: the one of `idHash`, or every one of `accountId`; returns how many. */
  endAdminSessions(target: { idHash: string } | { accountId: string }, now: Date): Promise<number>;
  findAdminRole(accountId: string): Promise<AdminRoleRow | undefined>;
  /** Idempotent: a role already granted keeps its grant. */
  grantAdminRole(accountId: string, grantedBy: string): Promise<void>;
  /** Takes the role away; false when the account had none. */
  revokeAdminRole(accountId: string): Promise<boolean>;
  /** Every admin role, oldest first. */
  adminRoles(): Promise<AdminRoleRow[]>;
  /** Stores a set-up link's code (hashed); deletes the codes expired before `sweepBefore`. */
  createAdminSetupCode(code: { codeHash: string; expiresAt: Date }, sweepBefore: Date): Promise<void>;
  findAdminSetupCode(codeHash: string): Promise<AdminSetupCodeRow | undefined>;
  /**
   * Makes `accountId` the first admin with a set-up code, in one transaction under a lock, so of
   * two claims at once (any codes, any instances) one wins: the code must be unused and unexpired,
   * and no admin role may exist. Marks the code used and grants the role; returns the code's row as
   * it was before (undefined: unknown code), or "admin-exists".
   */
  claimAdminSetupCode(codeHash: string, accountId: string, now: Date): Promise<AdminSetupCodeRow | undefined | "admin-exists">;
};

/** How admins look for accounts: by an address (the account's own or a linked wallet's), or text anywhere in an id, subject or email (any case). */
export type AccountQuery = { address: string } | { text: string } | Record<string, never>;

export type IdentityKey = { provider: string; subject: string };

export type AccountRow = { id: string; createdAt: Date; blockedAt: Date | null };

/** What an account is made of, as listed and shown to admins: its identities, oldest first. */
export type AccountView = AccountRow & { identities: Omit<IdentityRow, "accountId">[] };

export type AccountDeletion = { revokedTokens: number; endedSessions: number; identities: number };

/** A way into an account: a wallet (web3), an upstream provider's subject, or the passkey identity (its passkeys' user handle). */
export type IdentityRow = {
  provider: string;
  subject: string;
  accountId: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: Date;
  lastLoginAt: Date;
};

export type NewIdentity = { provider: string; subject: string; accountId: string; email?: string; emailVerified: boolean };

/** An identity as /account lists it. */
export type IdentitySummaryRow = Pick<IdentityRow, "provider" | "subject" | "email" | "createdAt" | "lastLoginAt">;

export type PasskeyRow = {
  /** The credential id (base64url). */
  id: string;
  accountId: string;
  userHandle: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: bigint;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
  name: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
};

export type NewPasskey = Pick<PasskeyRow, "id" | "accountId" | "userHandle" | "publicKey" | "transports" | "deviceType"> & {
  counter?: bigint;
  backedUp?: boolean;
};

/** A passkey as /account lists it. */
export type PasskeySummaryRow = Pick<PasskeyRow, "id" | "name" | "createdAt" | "lastUsedAt" | "deviceType" | "backedUp">;

export type LoginSessionRow = {
  /** SHA-256 of the session's cookie token. */
  idHash: string;
  accountId: string;
  /** The way in it logged in through: its identity's provider and subject (and passkey). */
  connector: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** Space separated. */
  amr: string;
  authTime: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  ip: string | null;
  userAgent: string | null;
  passkeyId: string | null;
};

export type NewLoginSession = Omit<LoginSessionRow, "email" | "emailVerified" | "revokedAt" | "ip" | "userAgent" | "passkeyId"> & {
  email?: string | null;
  emailVerified?: boolean;
  ip?: string | null;
  userAgent?: string | null;
  passkeyId?: string | null;
};

/** A live session as an account's page lists it. */
export type LiveSessionRow = Omit<LoginSessionRow, "accountId" | "emailVerified" | "revokedAt" | "passkeyId">;

/** A dashboard session, bound to the login session it was opened in. */
export type AdminSessionRow = {
  idHash: string;
  accountId: string;
  loginSessionId: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  ip: string | null;
  userAgent: string | null;
};

export type NewAdminSession = Pick<AdminSessionRow, "idHash" | "accountId" | "loginSessionId" | "expiresAt"> & {
  ip?: string | null;
  userAgent?: string | null;
};

export type AdminRoleRow = { accountId: string; grantedBy: string; grantedAt: Date };
export type AdminSetupCodeRow = { codeHash: string; createdAt: Date; expiresAt: Date; usedAt: Date | null; usedBy: string | null };

// Signing keys.

/** Changes run in a transaction (Store.transaction) that first takes `lock()`. */
export type SigningKeyStore = {
  /** Until the transaction ends, no other instance creates, drops or revokes keys of the set. */
  lock(purpose: KeyPurpose): Promise<void>;
  /** The set's keys of one alg in use (revoked and unpublished ones never are), by activation time. */
  live(purpose: KeyPurpose, alg?: SigningAlg): Promise<SigningKeyRow[]>;
  /** Keys out of use for good (revoked, or unpublished after retiring), newest first: history, without key material. */
  history(limit: number): Promise<KeyHistoryRow[]>;
  find(kid: string): Promise<SigningKeyRow | undefined>;
  create(key: NewSigningKey): Promise<void>;
  /** Revokes a key for good: its private half is erased. */
  revoke(kid: string, by: string, now: Date): Promise<void>;
  /** Takes retired keys out of the JWKS for good, their private halves erased; their rows stay as history. */
  unpublish(kids: string[], now: Date): Promise<void>;
  /** Tells every instance (this one too) on `channel`, when the transaction commits (a NOTIFY, and a version for polling). */
  announce(channel: string, payload: string): Promise<void>;
};

/** Which key set a key is in: access and ID tokens, or vehicle tokens (lib/vehicles). */
export type KeyPurpose = "access" | "vehicle";

/**
 * The algs Keyfob signs with (lib/keys/keystore.ts): RS256 always (the vehicle set has no other),
 * PS256 and ES256 for the access set's clients that ask for them (FAPI 2.0).
 */
export const SIGNING_ALGS = ["RS256", "PS256", "ES256"] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export type SigningKeyRow = {
  kid: string;
  alg: SigningAlg;
  /** The set it is in. */
  purpose: KeyPurpose;
  publicJwk: JWK;
  /** The private JWK, encrypted (lib/keys/encryption.ts); empty once revoked or unpublished. */
  privateJwe: string;
  createdAt: Date;
  activatesAt: Date;
  revokedAt: Date | null;
  /** Who revoked it (an admin's label). */
  revokedBy: string | null;
  unpublishedAt: Date | null;
};

export type KeyHistoryRow = Omit<SigningKeyRow, "publicJwk" | "privateJwe">;

export type NewSigningKey = Pick<SigningKeyRow, "kid" | "alg" | "purpose" | "publicJwk" | "privateJwe" | "activatesAt">;

// Audit events.

export type AuditStore = {
  /** Events in one statement. */
  insertBatch(events: AuditEventInput[]): Promise<void>;
  /** One event that, in a transaction's store, commits with the transaction's change. */
  insert(event: AuditEventInput): Promise<void>;
  /** A page of events, newest first by when they happened (a queued event may be written after later ones). */
  page(filter: AuditFilter, skip: number, take: number): Promise<AuditEventRow[]>;
  count(filter: AuditFilter): Promise<number>;
  /** Token issuances and failures per UTC day since `since`. */
  tokenEventsPerDay(since: Date): Promise<{ day: Date; action: string; count: bigint }[]>;
};

export type AuditEntry = {
  action: string;
  /** "success", or the OAuth error code. */
  outcome: string;
  actor?: string;
  clientId?: string;
  accountId?: string;
  ip?: string;
  detail?: string;
};

/** An audit event as it is stored, with when it happened (AuditLog makes its values storable first). */
export type AuditEventInput = AuditEntry & { at: Date };

/** Where a protocol request came from, for its audit events: the endpoint it called and the caller's address (when known). */
export type Caller = { endpoint: string; ip?: string };

export type AuditFilter = { action?: string; clientId?: string; accountId?: string; outcome?: string; from?: Date; to?: Date };

export type AuditEventRow = {
  id: bigint;
  at: Date;
  actor: string | null;
  action: string;
  clientId: string | null;
  accountId: string | null;
  ip: string | null;
  outcome: string;
  detail: string | null;
};

// Rate limits.

export type RateLimitStore = {
  /**
   * Counts one hit (or a lease of `hits`, all or none) on `key` at `nowSeconds` against `max` per
   * `windowSeconds`, over `shards` rows, in one statement.
   */
  hit(key: string, max: number, windowSeconds: number, shards: number, nowSeconds: number, hits?: number): Promise<RateLimitHitRow>;
  /**
   * The hits on `key` (summed over its `shards`, named as hit names them) in the window of
   * `nowSeconds` and the one before, without counting one: for a rule that looks at a count another
   * action keeps.
   */
  peek(key: string, windowSeconds: number, shards: number, nowSeconds: number): Promise<Omit<RateLimitHitRow, "allowed">>;
  /** Takes back a hit counted on a one-row `key` in the window of `nowSeconds` (one that proved not to count). */
  takeBack(key: string, windowSeconds: number, nowSeconds: number): Promise<void>;
};

/** One hit as counted: whether it is within the limit, and the window's and the previous window's hits. */
export type RateLimitHitRow = { allowed: boolean; hits: number; previousHits: number };

// The back-channel logout outbox.

/** Its rows are queued with the end of a session, in the transaction that ends it. */
export type LogoutStore = {
  /**
   * Claims up to `limit` due rows until `leaseUntil` and counts the attempt, in one statement (no
   * session state: it works through a transaction pooler). Instances claim side by side, never the
   * same row; a row whose lease lapsed (its instance died mid-delivery) is due again.
   */
  claim(now: Date, leaseUntil: Date, limit: number): Promise<LogoutRow[]>;
  /** Removes a row: delivered, or given up. */
  remove(id: bigint): Promise<void>;
  /** Releases a row's claim until `nextAttemptAt`, noting why the attempt failed. */
  retryAt(id: bigint, nextAttemptAt: Date, lastError: string): Promise<void>;
  /** Logout tokens not yet delivered nor given up. */
  pending(): Promise<number>;
};

/** A logout token to deliver, as a delivery pass claims it: where to, and what the token says. */
export type LogoutRow = {
  id: bigint;
  clientId: string;
  /** The client's back-channel logout URI now; null when it was removed since (nothing to deliver). */
  uri: string | null;
  sessionId: string;
  accountId: string;
  connector: string;
  createdAt: Date;
  /** Attempts so far, this one included. */
  attempts: number;
  /** The client's id_token_signed_response_alg: its logout tokens are signed as its ID tokens. */
  signingAlg: SigningAlg;
};

// DPoP proofs, client assertions and ENS profiles.

/** Single-use JWTs seen (DPoP proofs, client assertions), by a digest, until they expire. */
export type DpopProofStore = {
  /** Records a proof until `expiresAt`, in one statement: false when it was recorded before (a replay). */
  record(proofHash: string, expiresAt: Date): Promise<boolean>;
};

/** Keyed by the lowercase address, kept until they expire. */
export type EnsProfileStore = {
  /** The profile resolved for `address`, unless it expired by `now`. */
  find(address: string, now: Date): Promise<EnsProfileRow | undefined>;
  /** Records what resolution found for `address` until `expiresAt`, replacing an older result. */
  save(address: string, profile: EnsProfileRow, expiresAt: Date): Promise<void>;
};

/** A wallet's ENS profile as resolved: its primary name and avatar URL, each null when it has none. */
export type EnsProfileRow = { name: string | null; avatar: string | null };

// Housekeeping, the change feed, the pool.

/** What the sweep deletes: rows that ended before `cutoff`, sessions idle since `idleSince`, counters spent by `now`, audit events before `auditBefore`. */
export type SweepBounds = { now: Date; cutoff: Date; idleSince: Date; auditBefore: Date; challengesTotal: number };

/** How an instance hears of other instances' changes: LISTEN, or polling. */
export type ChangeFeed = {
  /** Calls `subscriber` for changes on `channel` (a plain identifier) until the returned function is called. */
  subscribe(channel: string, subscriber: Subscriber): () => void;
  close(): Promise<void>;
};

export type Subscriber = {
  /** A NOTIFY on the channel, with its payload. */
  notified(payload: string): void;
  /**
   * The channel is being listened to: from now on no notification is missed until `lost`. `first`
   * is false after a reconnection, when notifications may have been missed meanwhile, so whatever
   * they keep current must be reloaded.
   */
  listening?(first: boolean): void;
  /** The connection was lost: until `listening` is called again, notifications may be missed. */
  lost?(): void;
};

export type PoolStats = { total: number; idle: number; waiting: number };
