/**
 * A real local chain for integration tests: a hardhat 2 node in a child process, Solidity sources
 * compiled at test time with the solc npm package (solc-js, standard JSON), and deployments with
 * viem wallet clients on hardhat's well-known funded accounts. Nothing here is mocked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { freePort } from "../../scripts/free-port";
import {
  createPublicClient,
  createWalletClient,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Account,
  type Chain,
  type Transport,
} from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { hardhat } from "viem/chains";

const require = createRequire(import.meta.url);

export const CHAIN_DIR = import.meta.dirname;
export const CONTRACTS_DIR = path.join(CHAIN_DIR, "contracts");
const HARDHAT_CONFIG = path.join(CHAIN_DIR, "hardhat.config.cjs");

/** Hardhat's default chain id, also set in hardhat.config.cjs. */
export const HARDHAT_CHAIN_ID = 31337;

/**
 * The first accounts of hardhat's default mnemonic ("test test ... junk"), each funded with
 * 10000 ETH by `hardhat node`. Publicly known: for local chains only.
 */
export const HARDHAT_PRIVATE_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
] as const satisfies readonly Hex[];

export type LocalChain = {
  /** http://localhost:<port> */
  rpcUrl: string;
  chainId: number;
  chain: Chain;
  publicClient: PublicClient<Transport, Chain>;
  /** A wallet client on hardhat's funded account `index`. */
  wallet(index?: number): WalletClient<Transport, Chain, PrivateKeyAccount>;
  /** Stops the node (its whole process group); safe to call twice. */
  stop(): Promise<void>;
};

/** Starts `hardhat node` on a free port and resolves once it answers JSON-RPC. */
export async function startLocalChain(options: { timeoutMs?: number } = {}): Promise<LocalChain> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const port = await freePort();
  const rpcUrl = `http://localhost:${port}`;
  const cli = require.resolve("hardhat/internal/cli/bootstrap.js");

  // detached: the node gets its own process group, so stop() can end it with everything it started.
  const child = spawn(process.execPath, [cli, "node", "--config", HARDHAT_CONFIG, "--hostname", "localhost", "--port", String(port)], {
    cwd: CHAIN_DIR,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
      // hardhat.config.cjs ends the node when this process is gone.
      KEYFOB_CHAIN_PARENT_PID: String(process.pid),
    },
  });
  // The node logs every RPC call: keep reading (a full pipe would stall it) and keep the tail for errors.
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);

  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const killOnExit = () => killGroup(child, "SIGKILL");
  process.once("exit", killOnExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 3_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitForRpc(rpcUrl, timeoutMs, exited, () => output);
  } catch (error) {
    await stop();
    throw error;
  }

  const chain: Chain = { ...hardhat, id: HARDHAT_CHAIN_ID, rpcUrls: { default: { http: [rpcUrl] } } };
  const transport = http(rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const chainId = await publicClient.getChainId();
  if (chainId !== HARDHAT_CHAIN_ID) {
    await stop();
    throw new Error(`hardhat node answers chain id ${chainId}, expected ${HARDHAT_CHAIN_ID}`);
  }
  return {
    rpcUrl,
    chainId,
    chain,
    publicClient,
    wallet: (index = 0) =>
      createWalletClient({ account: privateKeyToAccount(HARDHAT_PRIVATE_KEYS[index]), chain, transport, pollingInterval: 50 }),
    stop,
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

async function waitForRpc(rpcUrl: string, timeoutMs: number, exited: Promise<number | null>, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined) {
      throw new Error(`hardhat node exited (code ${exitCode}) before answering RPC:\n${output()}`);
    }
    try {
      const response = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(1_000),
      });
      if (response.ok && typeof ((await response.json()) as { result?: unknown }).result === "string") return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`hardhat node did not answer RPC at ${rpcUrl} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export type CompiledContract = { abi: Abi; bytecode: Hex };

type SolcOutput = {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
};

/**
 * Compiles every `*.sol` file in `dir` with the solc npm package (standard JSON), resolving relative
 * imports from the same folder. Returns the contracts by name. Takes a few seconds (solc-js is wasm).
 */
export function compileContracts(dir = CONTRACTS_DIR): Record<string, CompiledContract> {
  const solc = require("solc") as {
    compile(input: string, callbacks?: { import(p: string): { contents: string } | { error: string } }): string;
  };
  const sources: Record<string, { content: string }> = {};
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith(".sol"))
    .sort()) {
    sources[file] = { content: readFileSync(path.join(dir, file), "utf8") };
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const findImports = (importPath: string) => {
    const resolved = path.resolve(dir, importPath);
    if (!resolved.startsWith(dir + path.sep)) return { error: `import outside ${dir}: ${importPath}` };
    try {
      return { contents: readFileSync(resolved, "utf8") };
    } catch {
      return { error: `not found: ${importPath}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);

  const compiled: Record<string, CompiledContract> = {};
  for (const contracts of Object.values(output.contracts ?? {})) {
    for (const [name, contract] of Object.entries(contracts)) {
      compiled[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  return compiled;
}

/** Deploys a compiled contract from a funded account and returns its address once mined. */
export async function deploy(
  chain: LocalChain,
  contract: CompiledContract,
  args: readonly unknown[] = [],
  wallet: WalletClient<Transport, Chain, Account> = chain.wallet(0),
): Promise<Address> {
  const hash = await wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args } as never);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deployment failed in transaction ${hash}`);
  return receipt.contractAddress;
}
