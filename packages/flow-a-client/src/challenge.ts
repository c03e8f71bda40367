/**
 * The check that makes the library safe to point at a URL: it signs only a fresh Flow A challenge
 * from the Keyfob it asked, for this domain, address and chain.
 */
import { getAddress } from "viem";
import { UnsafeChallengeError } from "./errors.js";

/** How long a challenge's Issued At may be from this machine's clock. */
const MAX_CLOCK_DIFFERENCE_MS = 5 * 60_000;

/** The Flow A challenge's exact layout (Keyfob's lib/siwe/challenge.ts), and nothing else: no statement of its own, no resources. */
const FLOW_A_CHALLENGE =
  /^(?<host>\S+) wants you to sign in with your Ethereum account:\n(?<address>0x[0-9a-fA-F]{40})\n\n(?<domainHost>\S+) is asking you sign in\.\n\nURI: (?<uri>\S+)\nVersion: 1\nChain ID: (?<chainId>\d+)\nNonce: [0-9A-Za-z]{30}\nIssued At: (?<issuedAt>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/;

/**
 * Checks that `challenge` is a fresh Flow A challenge from `authUrl` for this domain, address and
 * chain. A key that signs whatever it is sent is a signing oracle: a hostile or mistyped authUrl
 * could hand it another site's sign-in message (Keyfob's own hosted login, say) and log in as it.
 */
export function checkChallenge(
  challenge: string,
  expected: { authUrl: string; domain: string; address: string; chainId: number; now?: Date },
): void {
  const fields = FLOW_A_CHALLENGE.exec(challenge)?.groups;
  if (!fields) throw new UnsafeChallengeError("the challenge is not a Flow A challenge");
  const auth = new URL(expected.authUrl);
  if (fields.host !== auth.host || fields.uri !== expected.authUrl.replace(/\/+$/, ""))
    throw new UnsafeChallengeError(`the challenge is not for ${auth.origin}`);
  if (fields.domainHost !== new URL(expected.domain).hostname) throw new UnsafeChallengeError("the challenge is for another domain");
  if (getAddress(fields.address) !== getAddress(expected.address)) throw new UnsafeChallengeError("the challenge is for another address");
  if (Number(fields.chainId) !== expected.chainId)
    throw new UnsafeChallengeError(`the challenge is for chain ${fields.chainId}, not ${expected.chainId}`);
  const skew = Math.abs(new Date(fields.issuedAt).getTime() - (expected.now ?? new Date()).getTime());
  if (!(skew <= MAX_CLOCK_DIFFERENCE_MS)) throw new UnsafeChallengeError("the challenge was not issued just now");
}
