"use client";
/**
 * Connect a wallet and sign an EIP-4361 (Sign-In with Ethereum) message, with the states and
 * failures a person needs to see: no wallet, a refused connection or signature (EIP-1193 4001), a
 * request already open in the wallet, and a wallet on another chain than the message's. The
 * components put these into words (messages/*.json, namespace `wallet`).
 *
 * Wrong chain: the message names Keyfob's chain and a plain wallet's signature does not depend on
 * the network it is on, so the person may sign anyway; a smart-contract wallet signs for the chain
 * it is on, so switching first is offered as the main choice.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { getAddress, type Address } from "viem";
import { createSiweMessage } from "viem/siwe";
import { useConnect, useConnection, useConnectors, useDisconnect, useSignMessage, useSwitchChain, type Connector } from "wagmi";

export type SiweStep = "idle" | "connecting" | "wrong-chain" | "switching" | "signing" | "submitting" | "done";
export type SiweProblemKind =
  | "no-wallet"
  | "rejected-connection"
  | "rejected-switch"
  | "rejected-signature"
  | "pending"
  | "unknown-chain"
  | "wallet"
  | "server";
export type SiweProblem = {
  kind: SiweProblemKind;
  /** The wallet's own words (kind "wallet"), or the server's sentence (kind "server"). */
  detail?: string;
  /** The login itself is over (expired or used): only starting again helps. */
  restart?: boolean;
  /** The server's title for its refusal (kind "server"), when it has one of its own. */
  title?: string;
  /** Trying again cannot help (e.g. a blocked account): no "Try again". */
  final?: boolean;
};
export type SubmitResult = { error: string; restart?: boolean; title?: string; final?: boolean } | undefined;

export type SiweOptions = {
  chainId: number;
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
  /**
   * Asked before the wallet is: an error (e.g. the login has expired) ends the attempt there, so
   * the person is not asked to sign for nothing.
   */
  check?: () => Promise<SubmitResult>;
};

export function hasBrowserWallet(): boolean {
  return typeof window !== "undefined" && Boolean((window as { ethereum?: unknown }).ethereum);
}

export function useSiwe({ chainId, issuerUrl, nonce, statement, purpose, serverTime, submit, check }: SiweOptions) {
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
  /** The connector the person chose last, for "Try again" and for showing its dialog (WalletConnect). */
  const [chosen, setChosen] = useState<Connector | undefined>(undefined);
  const busy = useRef(false);
  /** Bumped by cancel(): a cancelled attempt's late result is ignored. */
  const attempt = useRef(0);

  useEffect(() => {
    // The person switched networks in the wallet by hand.
    if (step === "wrong-chain" && connection.status === "connected" && connection.chainId === chainId) setStep("idle");
  }, [step, connection.status, connection.chainId, chainId]);

  const signAndSubmit = useCallback(
    async (address: Address, mine: number) => {
      setStep("signing");
      const refused = await check?.();
      if (attempt.current !== mine) return;
      if (refused) {
        setProblem({ kind: "server", detail: refused.error, restart: refused.restart, title: refused.title, final: refused.final });
        setStep("idle");
        return;
      }
      const text = message(getAddress(address));
      const signature = await signMessage.mutateAsync({ message: text, account: getAddress(address) });
      if (attempt.current !== mine) return;
      setStep("submitting");
      const result = await submit(text, signature);
      if (attempt.current !== mine) return;
      if (result && "error" in result) {
        setProblem({ kind: "server", detail: result.error, restart: result.restart, title: result.title, final: result.final });
        setStep("idle");
        return;
      }
      setStep("done");
    },
    [check, message, signMessage, submit],
  );

  const fail = useCallback((error: unknown, during: SiweStep, mine: number) => {
    if (attempt.current !== mine) return;
    setProblem(describe(error, during));
    setStep("idle");
  }, []);

  /** The main action: connect (with `connector`, or the browser wallet) if needed, check the chain, sign, submit. */
  const start = useCallback(
    async (connector?: Connector) => {
      if (busy.current) return;
      busy.current = true;
      const mine = ++attempt.current;
      setProblem(null);
      let during: SiweStep = "connecting";
      try {
        let address = connection.address;
        let walletChain = connection.chainId;
        if (connection.status !== "connected" || !address) {
          const target = connector ?? connectors.find((c) => c.id === "injected") ?? connectors[0];
          setChosen(target);
          if (!target || (target.id === "injected" && !hasBrowserWallet())) {
            setProblem({ kind: "no-wallet" });
            return;
          }
          setStep("connecting");
          const result = await connect.mutateAsync({ connector: target });
          if (attempt.current !== mine) return;
          address = result.accounts[0];
          walletChain = result.chainId;
        }
        if (walletChain !== chainId) {
          setStep("wrong-chain");
          return;
        }
        during = "signing";
        await signAndSubmit(address, mine);
      } catch (error) {
        fail(error, during, mine);
      } finally {
        if (attempt.current === mine) busy.current = false;
      }
    },
    [chainId, connect, connection.address, connection.chainId, connection.status, connectors, fail, signAndSubmit],
  );

  /** Wrong chain: ask the wallet to switch, then sign. A refused switch stays on the wrong-chain notice. */
  const switchAndSign = useCallback(async () => {
    if (busy.current || !connection.address) return;
    busy.current = true;
    const mine = ++attempt.current;
    setProblem(null);
    let during: SiweStep = "switching";
    try {
      setStep("switching");
      await switchChain.mutateAsync({ chainId });
      during = "signing";
      await signAndSubmit(connection.address, mine);
    } catch (error) {
      if (attempt.current !== mine) return;
      setProblem(describe(error, during));
      setStep(during === "switching" ? "wrong-chain" : "idle");
    } finally {
      if (attempt.current === mine) busy.current = false;
    }
  }, [chainId, connection.address, signAndSubmit, switchChain]);

  /** Wrong chain: sign anyway (the message itself names Keyfob's chain). */
  const signAnyway = useCallback(async () => {
    if (busy.current || !connection.address) return;
    busy.current = true;
    const mine = ++attempt.current;
    setProblem(null);
    try {
      await signAndSubmit(connection.address, mine);
    } catch (error) {
      fail(error, "signing", mine);
    } finally {
      if (attempt.current === mine) busy.current = false;
    }
  }, [connection.address, fail, signAndSubmit]);

  /** Abandons the attempt in progress (e.g. the WalletConnect dialog was closed): back to the start, no message. */
  const cancel = useCallback(() => {
    attempt.current++;
    busy.current = false;
    setProblem(null);
    setStep("idle");
  }, []);

  /** "Try again" after a problem: the same way in as before. */
  const retry = useCallback(() => start(chosen), [chosen, start]);

  const forgetWallet = useCallback(async () => {
    setProblem(null);
    setStep("idle");
    await disconnect.mutateAsync({}).catch(() => undefined);
  }, [disconnect]);

  return {
    step,
    problem,
    chosen,
    address: connection.status === "connected" ? connection.address : undefined,
    walletChainId: connection.status === "connected" ? connection.chainId : undefined,
    start,
    retry,
    cancel,
    switchAndSign,
    signAnyway,
    forgetWallet,
    dismissProblem: () => setProblem(null),
  };
}

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

function describe(error: unknown, during: SiweStep): SiweProblem {
  const { code, name } = errorCode(error);
  if (name === "ProviderNotFoundError") return { kind: "no-wallet" };
  if (code === 4001)
    return { kind: during === "connecting" ? "rejected-connection" : during === "switching" ? "rejected-switch" : "rejected-signature" };
  if (code === -32002) return { kind: "pending" };
  if (code === 4902) return { kind: "unknown-chain" };
  const detail =
    (error as { shortMessage?: unknown; message?: unknown } | undefined)?.shortMessage ?? (error as { message?: unknown })?.message;
  return { kind: "wallet", detail: typeof detail === "string" && detail.length < 200 ? detail : undefined };
}
