/**
 * A blocked account cannot log in (hosted page, Flow A for its wallets, a code issued before),
 * and its sessions and tokens stop working at the next request on every instance.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { blockAccount, unblockAccount } from "@/lib/accounts/blocking";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { findSession } from "@/lib/sessions/login-session";
import { expectError, requestChallenge, submit } from "./support/flow-a";
import { activeUser, authorizeQuery, token, userinfo } from "./support/flow-b";

let other: Keyfob;
beforeAll(() => {
  other = createKeyfob({ ...loadConfig(), recoveryThreads: 0 });
});
afterAll(() => other.close());

it("blocks logins, sessions, codes and tokens of the account and its wallets, until unblocked", async () => {
  // A Google user with a session and tokens, and a wallet linked to the account with a Flow A token of its own.
  const { app, identity, accountId, session: newSession, tokens, license, wallet, walletTokens } = await activeUser();
  expect((await userinfo(walletTokens.access_token)).status).toBe(200);

  // A code issued just before the block.
  const pending = await startAuthorization(keyfob(), authorizeQuery(app));
  if (pending.kind !== "login") throw new Error("expected the login page");
  const pendingCode = new URL((await completeAuthorization(keyfob(), pending.interactionId, { identity })).location).searchParams.get(
    "code",
  )!;

  expect(await blockAccount(other, accountId)).toEqual({ revokedTokens: 2, revokedSessions: 2 }); // the Google login's and the wallet's; two logins
  // On the other instance: tokens, sessions and the code are dead at once.
  await expectError(await userinfo(tokens.access_token), 401, "invalid_token");
  await expectError(await userinfo(walletTokens.access_token), 401, "invalid_token");
  expect(await findSession(keyfob(), newSession!.token)).toBeUndefined();
  await expectError(await token(app, { code: pendingCode }), 400, "invalid_grant");
  // No new login: the hosted page, and Flow A for the linked wallet.
  const again = await startAuthorization(keyfob(), authorizeQuery(app));
  if (again.kind !== "login") throw new Error("expected the login page");
  await expect(completeAuthorization(keyfob(), again.interactionId, { identity })).rejects.toMatchObject({ code: "access_denied" });
  const refused = await requestChallenge(license, { address: wallet.address });
  await expectError(await submit(license, refused.state, await wallet.signMessage({ message: refused.challenge })), 400, "invalid_grant");

  await unblockAccount(keyfob(), accountId);
  const after = await requestChallenge(license, { address: wallet.address });
  expect((await submit(license, after.state, await wallet.signMessage({ message: after.challenge }))).status).toBe(200);
  const back = await startAuthorization(keyfob(), authorizeQuery(app));
  if (back.kind !== "login") throw new Error("expected the login page");
  expect((await completeAuthorization(keyfob(), back.interactionId, { identity })).location).toContain("code=");
});
