import { AuditLog } from "./audit";
import type { Config } from "./config";
import type pg from "pg";
import { createStorage, type Database, type Storage } from "./db/client";
import { deriveKey } from "./keys/derive";
import { deriveEncryptionKey } from "./keys/encryption";
import { KeyStore } from "./keys/keystore";
import { createRecovery } from "./siwe/recovery";
import { createChainVerifier, type SignatureVerifiers } from "./siwe/signature";

/** Everything a protocol action needs: configuration, storage, signing keys and the chain. */
export type Keyfob = {
  config: Config;
  db: Database;
  /** The pool under Prisma, for Flow A's hot-path statements (lib/db/flow-a.ts). */
  pool: pg.Pool;
  keys: KeyStore;
  /** Encrypts signing keys at rest. */
  encryptionKey: Uint8Array;
  /** MAC keys of their own (lib/keys/derive.ts): the dashboard's session, wallet-link nonces. */
  macKeys: { adminSession: Uint8Array; walletLink: Uint8Array };
  audit: AuditLog;
  /** EIP-191 recovery, and ERC-1271/6492 verification when RPC_URL is set. */
  signatures: SignatureVerifiers;
  /** Writes buffered audit events, stops the recovery threads and key notifications and, if it opened it, closes the pool. */
  close(): Promise<void>;
};

/** Builds a Keyfob; `storage` lets several share one database connection pool (tests, CLI). */
export function createKeyfob(config: Config, storage?: Storage): Keyfob {
  if (!config.databaseUrl || !config.secret) {
    throw new Error("createKeyfob needs DATABASE_URL and KEYFOB_SECRET (the launcher sets both for the embedded database)");
  }
  const { db: database, pool } = storage ?? createStorage(config.databaseUrl, config.dbPoolSize);
  const encryptionKey = deriveEncryptionKey(config.secret);
  const audit = new AuditLog(database);
  const recover = createRecovery(config.recoveryThreads);
  const keys = new KeyStore(
    database,
    encryptionKey,
    {
      rotationPeriod: config.keyRotationPeriod,
      publishLead: config.keyPublishLead,
      // A retired key stays published until the longest-lived token it signed has expired.
      tokenTtl: Math.max(config.accessTokenTtl, config.idTokenTtl),
    },
    undefined,
    undefined,
    // Other instances announce key changes (an emergency revocation) on this connection.
    { listen: { connectionString: config.databaseUrl, connectionTimeoutMillis: 5_000, keepAlive: true } },
  );
  return {
    config,
    db: database,
    pool,
    encryptionKey,
    macKeys: { adminSession: deriveKey(config.secret, "admin-session"), walletLink: deriveKey(config.secret, "wallet-link") },
    audit,
    keys,
    signatures: { recover, onChain: createChainVerifier(config.rpcUrl, config.chainId) },
    async close() {
      await audit.flush();
      await recover.close();
      await keys.close();
      if (!storage) {
        await database.$disconnect();
        await pool.end();
      }
    },
  };
}
