import type { Address, Hex } from "viem";
import flowA from "../vectors/flow-a.json" with { type: "json" };

type FlowAVectors = typeof flowA & {
  challenge: { address_as_sent: Address };
  signature: { signature: Hex; recovers_to: Address; eip191_hash: Hex };
};

/**
 * The known-answer vectors of Flow A's wire format (test/vectors/flow-a.json), copied from the
 * platform's shared vectors: challenges and `sub` values of tokens already in use.
 */
export const flowAVectors = flowA as FlowAVectors;
