/**
 * What a message signed on Keyfob's own pages is for, written as its one EIP-4361 Resources entry.
 * A Flow A challenge never has a Resources line, so a signature made for Flow A (by an application,
 * or by a client library that signs only Flow A challenges) can never log in on the hosted page,
 * and a login message cannot link a wallet, nor the other way round. No Node imports: the login
 * page's browser code writes these too.
 */
export const SIWE_PURPOSE = {
  login: "urn:keyfob:purpose:hosted-login",
  linkWallet: "urn:keyfob:purpose:link-wallet",
} as const;

export type SiwePurpose = keyof typeof SIWE_PURPOSE;
