import { AuditLog } from "./audit";
import { systemClock, type Clock } from "./clock";
import { ClientCache } from "./clients/cache";
import { directDatabaseUrl, type Config } from "./config";
import { createEnsResolver, type EnsResolver } from "./ens/profiles";
import { createStore, type ChangeFeed, type Store } from "./store";
import { deriveKey } from "./keys/derive";
import { deriveEncryptionKey } from "./keys/encryption";
import { clientSecretKey } from "./oauth/client-assertion";
import { KeyStore, SIGNING_ALGS } from "./keys/keystore";
import { LogoutDelivery } from "./sessions/backchannel-logout";
import { IssuedChallenges } from "./siwe/issued-challenges";
import { createRecovery } from "./siwe/recovery";
import { createChainVerifier, type SignatureVerifiers } from "./siwe/signature";
import { createAccessPolicy, type VehicleAccessPolicy } from "./vehicles/access";
import { VehicleEventWatcher } from "./vehicles/watcher";

/** Everything a protocol action needs: configuration, storage, signing keys and the chain. */
export type Keyfob = {
  config: Config;
  /** What time it is (lib/clock.ts): the system's, or a test's. */
  clock: Clock;
  /** Every statement Keyfob runs (lib/store). */
  store: Store;
  /** The access, ID and logout tokens' signing keys: RS256's, with PS256's and ES256's for the clients that ask for them (KeyStore.sets). */
  keys: KeyStore;
  /** Vehicle tokens' signing keys: a set of their own (lib/vehicles). */
  vehicleKeys: KeyStore;
  /** Which privileges a vehicle's owner granted (lib/vehicles/access.ts): the chain, or VEHICLE_GRANTS; none without either. */
  vehicleAccess?: VehicleAccessPolicy;
  /** Ends vehicle tokens on the vehicle contracts' transfers and privilege changes (started by lib/runtime.ts in a server); none without a chain and VEHICLE_CONTRACTS. */
  vehicleEvents?: VehicleEventWatcher;
  /** Clients as the token endpoints and CORS need them, cached while notifications are heard (lib/clients/cache.ts). */
  clients: ClientCache;
  /**
   * How the instance hears of key and client changes made by others: its one listening connection
   * (on the direct URL), or, behind a transaction pooler without one, polling.
   */
  notifications: ChangeFeed;
  /** Encrypts signing keys at rest. */
  encryptionKey: Uint8Array;
  /** MAC keys of their own (lib/keys/derive.ts): the dashboard's test sign-in results, wallet-link nonces, DPoP nonces, refresh tokens' successors. */
  macKeys: { tryResult: Uint8Array; walletLink: Uint8Array; dpopNonce: Uint8Array; refreshSuccessor: Uint8Array };
  /** Encrypts client_secret_jwt clients' secrets at rest (lib/oauth/client-assertion.ts). */
  clientSecretKey: Uint8Array;
  audit: AuditLog;
  /** Flow A challenges this instance issued, so that a submission here need not read its message back. */
  challenges: IssuedChallenges;
  /** EIP-191 recovery, and ERC-1271/6492 verification by the RPC_URL providers when there are any. */
  signatures: SignatureVerifiers;
  /** ENS names and avatars (the profile scope's claims) on the RPC_URL providers, when there are any. */
  ens?: EnsResolver;
  /** Delivers back-channel logout tokens from the outbox (started by lib/runtime.ts in a server). */
  logouts: LogoutDelivery;
  /** Writes buffered audit events, stops the recovery threads and notifications and, if it opened it, closes the store. */
  close(): Promise<void>;
};

/**
 * Builds a Keyfob; `shared` lets several share one store, and so one connection pool (tests, CLI),
 * and `clock` sets its time (tests).
 */
export function createKeyfob(config: Config, shared?: Store, { clock = systemClock }: { clock?: Clock } = {}): Keyfob {
  if (!config.databaseUrl || !config.secret) {
    throw new Error("createKeyfob needs DATABASE_URL and KEYFOB_SECRET (the launcher sets both for the embedded database)");
  }
  const store =
    shared ??
    createStore(config.databaseUrl, {
      poolSize: config.dbPoolSize,
      preparedStatements: config.preparedStatements,
      statementTimeoutMs: config.databasePooled ? undefined : config.statementTimeout * 1000,
    });
  const encryptionKey = deriveEncryptionKey(config.secret);
  const audit = new AuditLog(store, clock);
  const recover = createRecovery(config.recoveryThreads);
  // Other instances announce key and client changes (an emergency revocation, a disabled client) on this connection.
  const notifications = store.changeFeed(directDatabaseUrl(config));
  const keys = new KeyStore(
    store,
    encryptionKey,
    {
      rotationPeriod: config.keyRotationPeriod,
      publishLead: config.keyPublishLead,
      // A retired key stays published until the longest-lived token it signed has expired.
      tokenTtl: Math.max(config.accessTokenTtl, config.idTokenTtl),
    },
    () => clock.now(),
    undefined,
    { notifications, algs: SIGNING_ALGS },
  );
  const vehicleKeys = new KeyStore(
    store,
    encryptionKey,
    {
      rotationPeriod: config.keyRotationPeriod,
      publishLead: config.keyPublishLead,
      tokenTtl: config.vehicleTokenTtl,
    },
    () => clock.now(),
    undefined,
    { notifications, purpose: "vehicle" },
  );
  const clients = new ClientCache(store, notifications);
  const vehicleAccess = createAccessPolicy(config);
  const vehicleEvents =
    vehicleAccess?.source === "chain" && config.vehicleContracts.length > 0
      ? new VehicleEventWatcher({ config, store, clock, audit, access: vehicleAccess })
      : undefined;
  const logouts = new LogoutDelivery({
    store,
    clock,
    keys,
    audit,
    issuerUrl: config.issuerUrl,
    retry: config.backchannelLogoutRetry,
    allowedNetworks: config.backchannelLogoutAllowedNetworks,
  });
  return {
    config,
    clock,
    store,
    encryptionKey,
    macKeys: {
      tryResult: deriveKey(config.secret, "admin-try-result"),
      walletLink: deriveKey(config.secret, "wallet-link"),
      dpopNonce: deriveKey(config.secret, "dpop-nonce"),
      refreshSuccessor: deriveKey(config.secret, "refresh-successor"),
    },
    clientSecretKey: clientSecretKey(config.secret),
    audit,
    keys,
    vehicleKeys,
    vehicleAccess,
    vehicleEvents,
    clients,
    notifications,
    logouts,
    challenges: new IssuedChallenges(),
    signatures: { recover, onChain: createChainVerifier(config.rpcUrls, config.chainId, config.rpcQuorum) },
    ens: createEnsResolver(config),
    async close() {
      await vehicleEvents?.close();
      await logouts.close();
      await audit.close();
      await recover.close();
      await keys.close();
      await vehicleKeys.close();
      clients.close();
      await notifications.close();
      if (!shared) await store.close();
    },
  };
}
