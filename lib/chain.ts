import { defineChain, HttpRequestError, TimeoutError, type Chain } from "viem";

/** The configured chain (CHAIN_ID) on the RPC_URL providers, for viem clients. */
export function rpcChain(chainId: number, rpcUrls: string[]): Chain {
  return defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: rpcUrls } },
  });
}

/** Whether a failed RPC call is an execution revert (the contract said no) rather than a failure to ask. */
export function isExecutionRevert(error: unknown): boolean {
  for (
    let e = error as { code?: unknown; data?: unknown; details?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 6;
    depth++
  ) {
    if (e instanceof HttpRequestError || e instanceof TimeoutError) return false;
    // Geth and most providers: code 3 with revert data; hardhat: -32603 with revert data.
    if (e.code === 3 || (typeof e.data === "string" && e.data.startsWith("0x"))) return true;
    if (/revert/i.test(String(e.details ?? ""))) return true;
    e = e.cause as typeof e;
  }
  return false;
}
