import { AuditLog } from "./audit";
import type { Config } from "./config";
import { createDatabase, type Database } from "./db/client";
import { deriveEncryptionKey } from "./keys/encryption";
import { KeyStore } from "./keys/keystore";
import { createChainVerifier, type ChainVerifier } from "./siwe/signature";

/** Everything a protocol action needs: configuration, storage, signing keys and the chain. */
export type Keyfob = {
  config: Config;
  db: Database;
  keys: KeyStore;
  /** Encrypts secrets at rest: signing keys and server-generated account keys. */
  encryptionKey: Uint8Array;
  audit: AuditLog;
  /** ERC-1271/6492 verification, when RPC_URL is set. */
  chain?: ChainVerifier;
};

export function createKeyfob(config: Config, db?: Database): Keyfob {
  if (!config.databaseUrl || !config.secret) {
    throw new Error("createKeyfob needs DATABASE_URL and KEYFOB_SECRET (the launcher sets both for the embedded database)");
  }
  const database = db ?? createDatabase(config.databaseUrl, config.dbPoolSize);
  const encryptionKey = deriveEncryptionKey(config.secret);
  return {
    config,
    db: database,
    encryptionKey,
    audit: new AuditLog(database),
    keys: new KeyStore(database, encryptionKey, {
      rotationPeriod: config.keyRotationPeriod,
      publishLead: config.keyPublishLead,
      tokenTtl: config.accessTokenTtl,
    }),
    chain: createChainVerifier(config.rpcUrl, config.chainId),
  };
}
