import {
  createPublicClient,
  hexToBigInt,
  isAddressEqual,
  isErc6492Signature,
  isHex,
  parseErc6492Signature,
  size,
  slice,
  type Address,
  type Hex,
  type Transport,
  zeroAddress,
} from "viem";
import { isExecutionRevert, rpcChain } from "../chain";
import { log } from "../log";
import { chainRpcFailures, signatureChecks } from "../metrics";
import { invalidGrant, invalidRequest, OAuthError } from "../oauth/errors";
import { recoverInThread, type Recover } from "./recovery";
import { tracedHttp } from "../tracing";

/** How a signature was accepted. */
export type SignatureKind = "wallet" | "signer" | "contract";

export type SignatureCheck = {
  message: string;
  /** The address that claims to have signed. */
  address: Address;
  signature: string;
  /** For Flow A: the client, and whether a key is one of its enabled, unexpired, unrevoked signers. */
  client?: { id: string; isSigner(signer: Address): Promise<boolean> };
};

/** How signatures are checked: EIP-191 recovery (on worker threads in the server), and a chain when configured. */
export type SignatureVerifiers = { recover?: Recover; onChain?: ChainVerifier };

/** Checks a signature against a contract account on the configured chain (ERC-1271, ERC-6492). */
export type ChainVerifier = (address: Address, message: string, signature: Hex) => Promise<boolean>;

/**
 * A verifier on the RPC_URL providers, or none when there is none. Each provider is asked on its
 * own, and `quorum` of them must find the signature valid while none finds it invalid: one lying
 * or compromised provider can then refuse a contract signature, never forge one. A provider that
 * cannot answer counts for neither; too few answers is 503, never a guess.
 */
export function createChainVerifier(rpcUrls: string[], chainId: number, quorum = rpcUrls.length): ChainVerifier | undefined {
  if (rpcUrls.length === 0) return undefined;
  const providers = rpcUrls.map((url) => providerVerifier(url, chainId));
  return async (address, message, signature) => {
    // A wrapper that does not even decode deploys nothing: no provider is asked to vouch for it.
    if (isErc6492Signature(signature) && !wellFormedErc6492(signature)) return false;
    const answers = await Promise.allSettled(providers.map((verify) => verify(address, message, signature)));
    const valid = answers.filter((a) => a.status === "fulfilled" && a.value).length;
    const invalid = answers.filter((a) => a.status === "fulfilled" && !a.value).length;
    if (invalid > 0) {
      if (valid > 0) log.warn("RPC providers disagree on a contract signature; refused", { valid, invalid });
      return false;
    }
    if (valid >= quorum) return true;
    throw new OAuthError("temporarily_unavailable", "the chain could not be reached to verify a contract signature");
  };
}

/**
 * One provider's answer. viem's verifyMessage folds every failed call into "invalid", so each check
 * watches its transport: a revert is the contract's answer, anything else (network, timeout, HTTP
 * or JSON-RPC errors such as rate limits) means the provider could not answer: it throws.
 */
function providerVerifier(rpcUrl: string, chainId: number): ChainVerifier {
  const base = tracedHttp(rpcUrl, { timeout: 5_000, retryCount: 1 });
  const chain = rpcChain(chainId, [rpcUrl]);
  return async (address, message, signature) => {
    let unreachable = false;
    const watched: Transport = (options) => {
      const transport = base(options);
      return {
        ...transport,
        async request(args, requestOptions) {
          try {
            return await transport.request(args, requestOptions);
          } catch (error) {
            if (!isExecutionRevert(error)) {
              unreachable = true;
              chainRpcFailures.inc();
            }
            throw error;
          }
        },
      } as ReturnType<Transport>;
    };
    const client = createPublicClient({ chain, transport: watched });
    const unavailable = () => new OAuthError("temporarily_unavailable", "the chain could not be reached to verify a contract signature");
    // Only a contract account (or one an ERC-6492 wrapper deploys) is asked.
    if (!isErc6492Signature(signature)) {
      const code = await client.getCode({ address }).catch(() => undefined);
      if (unreachable) throw unavailable();
      if (!code || code === "0x") return false;
    }
    const valid = await client.verifyMessage({ address, message, signature }).catch(() => false);
    if (unreachable) throw unavailable();
    return valid;
  };
}

/** An ERC-6492 wrapper that decodes to (factory, factory calldata, signature), each present. */
function wellFormedErc6492(signature: Hex): boolean {
  try {
    const { address, data, signature: inner } = parseErc6492Signature(signature);
    return address !== undefined && !isAddressEqual(address, zeroAddress) && data !== undefined && size(data) >= 4 && size(inner) > 0;
  } catch {
    return false;
  }
}

/**
 * Verifies the EIP-191 signature of a message. Accepted, in order: (1) a plain wallet signing for
 * itself; (2) a signer enabled on the client, when the address is the client's own (a developer
 * license signing through one of its keys); (3) a contract account through ERC-1271, or ERC-6492
 * before it is deployed, when a chain is configured.
 */
export async function verifySignature(
  check: SignatureCheck,
  { recover = recoverInThread, onChain }: SignatureVerifiers = {},
): Promise<SignatureKind> {
  if (!isHex(check.signature, { strict: true }) || check.signature.length % 2 !== 0 || size(check.signature) < 65) {
    throw invalidRequest({ code: "signature_format" });
  }
  const signature = check.signature as Hex;
  if (size(signature) === 65 && malleable(signature)) {
    throw invalidGrant({ code: "signature_malleable" });
  }
  const { client } = check;
  let tried: SignatureMetricKind = throughSigner(check.address, client?.id) ? "signer" : "wallet";
  try {
    const claimant = await recoverClaimant(check.message, check.address, signature, client?.id, recover);
    if (claimant?.kind === "wallet") return countAccepted("wallet");
    if (claimant?.kind === "signer" && (await client?.isSigner(claimant.key))) return countAccepted("signer");
    if (onChain) {
      tried = isErc6492Signature(signature) ? "erc6492" : "erc1271";
      if (await onChain(check.address, check.message, signature)) return counted("contract", tried);
    }
  } catch (error) {
    signatureChecks.inc({ kind: tried, result: "unavailable" });
    throw error;
  }
  signatureChecks.inc({ kind: tried, result: "invalid" });
  throw invalidGrant({ code: "signature_mismatch" });
}

/**
 * Who signed a 65-byte EIP-191 signature, as Flow A accepts it: the address itself (`wallet`), or,
 * when the address is the client's own, a key that must be one of the client's signers (`signer`:
 * the caller checks that). Undefined for anything else, a malformed or malleable signature included.
 */
export async function recoverClaimant(
  message: string,
  address: Address,
  signature: string,
  clientId: string | undefined,
  recover: Recover = recoverInThread,
): Promise<{ kind: "wallet" | "signer"; key: Address } | undefined> {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature) || malleable(signature as Hex)) return undefined;
  const key = await recover(message, signature as Hex);
  if (!key) return undefined;
  if (isAddressEqual(key, address)) return { kind: "wallet", key };
  return throughSigner(address, clientId) ? { kind: "signer", key } : undefined;
}

/** A developer license signing through one of its keys: the address is the client's own. */
const throughSigner = (address: string, clientId: string | undefined) =>
  clientId !== undefined && address.toLowerCase() === clientId.toLowerCase();

/** Counts a signature accepted by recovery in keyfob_signature_checks_total. */
export function countAccepted(kind: "wallet" | "signer"): SignatureKind {
  return counted(kind, kind);
}

/** secp256k1's n / 2: EIP-2 signatures have s at most this, so each message has one signature per key. */
const SECP256K1_HALF_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n / 2n;

/** A 65-byte signature whose s is above n / 2: the other of a key's two signatures of the message (EIP-2). */
const malleable = (signature: Hex) => hexToBigInt(slice(signature, 32, 64)) > SECP256K1_HALF_ORDER;

/** How a check is counted in keyfob_signature_checks_total. */
type SignatureMetricKind = "wallet" | "signer" | "erc1271" | "erc6492";

function counted(kind: SignatureKind, metric: SignatureMetricKind): SignatureKind {
  signatureChecks.inc({ kind: metric, result: "valid" });
  return kind;
}
