/**
 * ENS profile claims (the `profile` scope), as siwe-oidc gives them: a wallet's primary ENS name as
 * `preferred_username` and its ENS avatar as `picture`. They are resolved when a wallet logs in on
 * the hosted page, through the ENS Universal Resolver (ENS_UNIVERSAL_RESOLVER) on the RPC_URL
 * providers, and kept in PostgreSQL for ENS_CACHE_TTL, for every instance: token requests only read
 * what is kept. ENS is display data, not authentication: the first provider that answers is
 * believed (no RPC_QUORUM), and a provider that cannot answer in time leaves the claims out; it
 * never fails or holds up a login.
 */
import { createPublicClient, fallback, isAddressEqual, type Address } from "viem";
import { rpcChain } from "../chain";
import type { Config } from "../config";
import type { Keyfob } from "../keyfob";
import { log } from "../log";
import type { EnsProfileRow } from "../store/contract";
import type { ProfileClaims } from "../tokens/issue";
import { tracedHttp } from "../tracing";

/** Longer values are no profile: a name is at most 255 bytes in DNS form, and a URL this long is no picture. */
const MAX_NAME_LENGTH = 255;
const MAX_AVATAR_LENGTH = 2_048;

/** Looks an address's profile up on the chain; throws when the providers cannot answer. */
export type EnsResolver = (address: Address) => Promise<EnsProfileRow>;

const NONE: EnsProfileRow = { name: null, avatar: null };

/** A resolver on the RPC_URL providers, or none when there is none. */
export function createEnsResolver(
  config: Pick<Config, "rpcUrls" | "chainId" | "ensUniversalResolver" | "ensTimeout">,
): EnsResolver | undefined {
  if (config.rpcUrls.length === 0) return undefined;
  const client = createPublicClient({
    chain: rpcChain(config.chainId, config.rpcUrls),
    transport: fallback(config.rpcUrls.map((url) => tracedHttp(url, { timeout: config.ensTimeout * 1000, retryCount: 0 }))),
    // Offchain (CCIP-read) names would have the server fetch URLs that whoever deploys a resolver chooses.
    ccipRead: false,
  });
  const universalResolverAddress = config.ensUniversalResolver;
  return async (address) => {
    // Loaded at the first resolution: viem/ens (ENS normalisation's tables) is 21 MB of RSS that an
    // instance without an RPC, or before its first wallet login, does not need.
    const { getEnsAddress, getEnsName, getEnsText, normalize } = await import("viem/ens");
    const name = await getEnsName(client, { address, universalResolverAddress });
    // A primary name that is not in normal form (a confusable, say) is not shown as the user's.
    if (!name || name.length > MAX_NAME_LENGTH || normalized(name, normalize) !== name) return NONE;
    const [forward, avatar] = await Promise.all([
      getEnsAddress(client, { name, universalResolverAddress }),
      // The avatar record as written, never fetched: viem's getEnsAvatar would have this server request
      // whatever URL (or NFT metadata) the record's owner chose, internal addresses included.
      getEnsText(client, { name, key: "avatar", universalResolverAddress }),
    ]);
    // The reverse record is the address's own claim: the name must resolve back to it.
    if (!forward || !isAddressEqual(forward, address)) return NONE;
    return { name, avatar: avatar && isPictureUrl(avatar) ? avatar : null };
  };
}

function normalized(name: string, normalize: (name: string) => string): string | undefined {
  try {
    return normalize(name);
  } catch {
    return undefined;
  }
}

/** An https URL: what a relying party can show as the picture (no data: URIs in tokens). */
function isPictureUrl(value: string): boolean {
  return value.length <= MAX_AVATAR_LENGTH && URL.parse(value)?.protocol === "https:";
}

/**
 * At a wallet login: makes sure a current profile of `address` is kept, resolving it when none is.
 * Never throws and never waits longer than ENS_TIMEOUT for the chain: without an answer, nothing
 * is kept (the next login asks again) and the tokens go without the claims.
 */
export async function refreshEnsProfile(
  { ens, store, config, clock }: Pick<Keyfob, "config" | "clock" | "store" | "ens">,
  address: Address,
): Promise<void> {
  if (!ens) return;
  const now = clock.now();
  try {
    if (await store.ensProfiles.find(address, now)) return;
    const profile = await withTimeout(ens(address), config.ensTimeout * 1000);
    await store.ensProfiles.save(address, profile, new Date(now.getTime() + config.ensCacheTtl * 1000));
  } catch (error) {
    // The error's name only: its message may hold the RPC URL, and with it a provider's API key.
    log.info("ENS profile not resolved", { reason: error instanceof Error ? error.name : "unknown" });
  }
}

/** The kept profile of an account's address (its ethereum_address), when current. */
export async function storedEnsProfile(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  address: string,
): Promise<EnsProfileRow | undefined> {
  return store.ensProfiles.find(address, clock.now());
}

/** The `profile` scope's claims for a grant: what a login kept, read only when the scope asks for it. */
export async function profileClaims(
  keyfob: Pick<Keyfob, "clock" | "store">,
  address: string,
  scope: readonly string[],
): Promise<ProfileClaims> {
  if (!scope.includes("profile")) return {};
  const profile = await storedEnsProfile(keyfob, address);
  return {
    ...(profile?.name && { preferredUsername: profile.name }),
    ...(profile?.avatar && { picture: profile.avatar }),
  };
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("ENS resolution timed out"), { name: "TimeoutError" })), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
