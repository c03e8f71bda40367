"use client";
/**
 * Connect a browser wallet and sign an EIP-4361 (Sign-In with Ethereum) message, with the states
 * and failures a person needs to see: no wallet, a refused connection or signature (EIP-1193
 * 4001), a request already open in the wallet, and a wallet on another chain than the message's.
 *
 * Wrong chain: the message names Keyfob's chain and a plain wallet's signature does not depend on
 * the network it is on, so the person may sign anyway; a smart-contract wallet signs for the chain
 * it is on, so switching first is offered as the main choice.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { getAddress, type Address } from "viem";
import { createSiweMessage } from "viem/siwe";
import { useConnect, useConnection, useConnectors, useDisconnect, useSignMessage, useSwitchChain } from "wagmi";

export type SiweStep = "idle" | "connecting" | "wrong-chain" | "switching" | "signing" | "submitting" | "done";
export type SiweProblem = {
  kind: "no-wallet" | "rejected-connection" | "rejected-signature" | "pending" | "unknown-chain" | "wallet" | "server";
  title: string;
  message: string;
  /** The login itself is over (expired or used): only starting again helps. */
  restart?: boolean;
};
export type SubmitResult = { error: string; restart?: boolean } | void | undefined;

type Options = {
  chainId: number;
  chainLabel: string;
  issuerUrl: string;
  /** The server-issued nonce the message must carry. */
  nonce: string;
  statement: string;
  /** What the message is for (its Resources line): the server accepts it for that page only. */
  purpose: string;
  /** The server's clock when the page was rendered (ms): messages carry the server's time. */
  serverTime: number;
  /** Sends message and signature to the server; an error keeps the person on the page. */
  submit: (message: string, signature: string) => Promise<SubmitResult>;
};

export function hasBrowserWallet(): boolean {
  return typeof window !== "undefined" && Boolean((window as { ethereum?: unknown }).ethereum);
}

/** The first steps of every wallet flow, as the page announces them. */
export function walletProgress(chainLabel: string): Partial<Record<SiweStep, string>> {
  return {
    connecting: "Approve the connection in your wallet…",
    switching: `Approve the switch to ${chainLabel} in your wallet…`,
    signing: "Check your wallet and sign the message…",
  };
}

export function useSiwe({ chainId, chainLabel, issuerUrl, nonce, statement, purpose, serverTime, submit }: Options) {
  const clockOffset = useMemo(() => serverTime - Date.now(), [serverTime]);
  /** The EIP-4361 message for this address: Keyfob's domain and URI, CHAIN_ID, the nonce, the server's time. */
  const message = useCallback(
    (address: Address) =>
      createSiweMessage({
        domain: new URL(issuerUrl).host,
        address,
        statement,
        uri: issuerUrl,
        version: "1",
        chainId,
        nonce,
        issuedAt: new Date(Date.now() + clockOffset),
        resources: [purpose],
      }),
    [chainId, clockOffset, issuerUrl, nonce, statement, purpose],
  );
  const connection = useConnection();
  const connectors = useConnectors();
  const connect = useConnect();
  const disconnect = useDisconnect();
  const switchChain = useSwitchChain();
  const signMessage = useSignMessage();
  const [step, setStep] = useState<SiweStep>("idle");
  const [problem, setProblem] = useState<SiweProblem | null>(null);
  const [walletDetected, setWalletDetected] = useState<boolean | null>(null);
  const busy = useRef(false);

  useEffect(() => {
    // Extensions inject window.ethereum before or shortly after load.
    setWalletDetected(hasBrowserWallet());
    const timer = setTimeout(() => setWalletDetected(hasBrowserWallet()), 600);
    return () => clearTimeout(timer);
  }, []);

  useEffect(() => {
    // The person switched networks in the wallet by hand.
    if (step === "wrong-chain" && connection.status === "connected" && connection.chainId === chainId) setStep("idle");
  }, [step, connection.status, connection.chainId, chainId]);

  const signAndSubmit = useCallback(
    async (address: Address) => {
      setStep("signing");
      const text = message(getAddress(address));
      const signature = await signMessage.mutateAsync({ message: text, account: getAddress(address) });
      setStep("submitting");
      const result = await submit(text, signature);
      if (result && "error" in result) {
        setProblem({ kind: "server", title: "Sign-in failed", message: result.error, restart: result.restart });
        setStep("idle");
        return;
      }
      setStep("done");
    },
    [message, signMessage, submit],
  );

  const fail = useCallback(
    (error: unknown, during: SiweStep) => {
      setProblem(describe(error, during, chainLabel));
      setStep("idle");
    },
    [chainLabel],
  );

  /** The main button: connect if needed, check the chain, sign, submit. */
  const start = useCallback(async () => {
    if (busy.current) return;
    busy.current = true;
    setProblem(null);
    let during: SiweStep = "connecting";
    try {
      let address = connection.address;
      let walletChain = connection.chainId;
      if (connection.status !== "connected" || !address) {
        if (!hasBrowserWallet()) {
          setWalletDetected(false);
          setProblem(noWallet);
          return;
        }
        setStep("connecting");
        const connector = connectors.find((c) => c.type === "injected") ?? connectors[0];
        const result = await connect.mutateAsync({ connector });
        address = result.accounts[0];
        walletChain = result.chainId;
      }
      if (walletChain !== chainId) {
        setStep("wrong-chain");
        return;
      }
      during = "signing";
      await signAndSubmit(address);
    } catch (error) {
      fail(error, during);
    } finally {
      busy.current = false;
    }
  }, [chainId, connect, connection.address, connection.chainId, connection.status, connectors, fail, signAndSubmit]);

  /** Wrong chain: ask the wallet to switch, then sign. */
  const switchAndSign = useCallback(async () => {
    if (busy.current || !connection.address) return;
    busy.current = true;
    setProblem(null);
    let during: SiweStep = "switching";
    try {
      setStep("switching");
      await switchChain.mutateAsync({ chainId });
      during = "signing";
      await signAndSubmit(connection.address);
    } catch (error) {
      const described = describe(error, during, chainLabel);
      setProblem(described);
      // A refused or impossible switch leaves "sign anyway" on screen.
      setStep(during === "switching" ? "wrong-chain" : "idle");
    } finally {
      busy.current = false;
    }
  }, [chainId, chainLabel, connection.address, signAndSubmit, switchChain]);

  /** Wrong chain: sign anyway (the message itself names Keyfob's chain). */
  const signAnyway = useCallback(async () => {
    if (busy.current || !connection.address) return;
    busy.current = true;
    setProblem(null);
    try {
      await signAndSubmit(connection.address);
    } catch (error) {
      fail(error, "signing");
    } finally {
      busy.current = false;
    }
  }, [connection.address, fail, signAndSubmit]);

  const forgetWallet = useCallback(async () => {
    setProblem(null);
    setStep("idle");
    await disconnect.mutateAsync({}).catch(() => undefined);
  }, [disconnect]);

  return {
    step,
    problem,
    walletDetected,
    address: connection.status === "connected" ? connection.address : undefined,
    walletChainId: connection.status === "connected" ? connection.chainId : undefined,
    start,
    switchAndSign,
    signAnyway,
    forgetWallet,
    dismissProblem: () => setProblem(null),
  };
}

const noWallet: SiweProblem = {
  kind: "no-wallet",
  title: "No wallet found in this browser",
  message: "Install a browser wallet such as MetaMask, Rabby or Coinbase Wallet, then reload this page.",
};

/** EIP-1193 / JSON-RPC error codes anywhere in the error's cause chain. */
function errorCode(error: unknown): { code?: number; name?: string } {
  for (let e = error as { code?: unknown; name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; depth++) {
    if (e.name === "UserRejectedRequestError" || e.code === 4001) return { code: 4001 };
    if (e.code === -32002) return { code: -32002 };
    if (e.code === 4902 || e.name === "SwitchChainNotSupportedError") return { code: 4902 };
    if (e.name === "ProviderNotFoundError" || e.name === "ConnectorNotFoundError") return { name: "ProviderNotFoundError" };
    e = e.cause as typeof e;
  }
  return {};
}

function describe(error: unknown, during: SiweStep, chainLabel: string): SiweProblem {
  const { code, name } = errorCode(error);
  if (name === "ProviderNotFoundError") return noWallet;
  if (code === 4001) {
    if (during === "connecting") {
      return { kind: "rejected-connection", title: "Connection declined", message: "Your wallet did not share an address with this page. Try again and approve the connection in your wallet." };
    }
    if (during === "switching") {
      return { kind: "rejected-connection", title: "Network not switched", message: `Your wallet stayed on its network. You can switch to ${chainLabel} or sign anyway.` };
    }
    return { kind: "rejected-signature", title: "Signature declined", message: "You declined the signature request, so you are not signed in. Nothing was signed or sent." };
  }
  if (code === -32002) {
    return { kind: "pending", title: "Your wallet is waiting for you", message: "A request is already open in your wallet. Open the wallet to answer it, then try again." };
  }
  if (code === 4902) {
    return { kind: "unknown-chain", title: `Your wallet cannot switch to ${chainLabel}`, message: "You can still sign: the message names the network, and signing sends no transaction." };
  }
  const detail = (error as { shortMessage?: unknown; message?: unknown } | undefined)?.shortMessage ?? (error as { message?: unknown })?.message;
  return {
    kind: "wallet",
    title: "Your wallet reported a problem",
    message: typeof detail === "string" && detail.length < 200 ? detail : "The wallet could not complete the request. Please try again.",
  };
}
