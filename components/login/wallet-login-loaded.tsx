/** The wallet sign-in with wagmi around it: what wallet-launcher.tsx loads when it is needed. */
import { Web3Providers, type WalletConnectSettings } from "../providers";
import { WalletLogin, type WalletLoginProps, type WalletStart } from "./wallet-login";

export type LoadedWalletLoginProps = WalletLoginProps & { walletConnect?: WalletConnectSettings; start?: WalletStart };

export function LoadedWalletLogin({ walletConnect, start, ...props }: LoadedWalletLoginProps) {
  return (
    <Web3Providers chainId={props.chainId} walletConnect={walletConnect} reconnect={!start}>
      <WalletLogin {...props} start={start} />
    </Web3Providers>
  );
}
