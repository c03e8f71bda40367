/** One key per purpose from KEYFOB_SECRET: a MAC or a session made with another purpose's key is worthless. */
import { createHmac, hkdfSync } from "node:crypto";
import { SignJWT } from "jose";
import { expect, it } from "vitest";
import { openTryResult, type TryResult } from "@/lib/admin/try-sign-in";
import { deriveKey, type KeyPurpose } from "@/lib/keys/derive";
import { keyfob } from "@/lib/runtime";
import { accountLinkNonce, checkAccountLinkNonce } from "@/lib/siwe/login";

const purposes: KeyPurpose[] = [
  "signing-key-encryption",
  "admin-try-result",
  "wallet-link",
  "upstream-session",
  "dpop-nonce",
  "refresh-successor",
];

it("derives a distinct, stable key per purpose", () => {
  const secret = "s".repeat(32);
  const keys = purposes.map((p) => Buffer.from(deriveKey(secret, p)).toString("hex"));
  expect(new Set(keys).size).toBe(purposes.length);
  expect(Buffer.from(deriveKey(secret, "admin-try-result")).toString("hex")).toBe(keys[1]);
  // The encryption key is the one signing keys were always stored with.
  expect(Buffer.from(deriveKey(secret, "signing-key-encryption"))).toEqual(
    Buffer.from(hkdfSync("sha256", secret, "keyfob", "signing-key-encryption", 32)),
  );
});

it("refuses a test sign-in result signed with the encryption key, and a link nonce MAC'd with it", async () => {
  const k = keyfob();
  const account = "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9";
  const result = {
    clientId: "kf_x",
    at: "2026-11-24T00:00:00.000Z",
    ok: false,
    error: "access_denied",
    description: "cancelled",
  } as TryResult;
  const seal = (key: Uint8Array) =>
    new SignJWT({ result })
      .setProtectedHeader({ alg: "HS256" })
      .setAudience("keyfob_admin_try_result")
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(key);
  expect(await openTryResult(k, await seal(k.macKeys.tryResult))).toEqual(result);
  expect(await openTryResult(k, await seal(k.encryptionKey))).toBeUndefined();
  expect(
    await openTryResult(k, await seal(new Uint8Array(hkdfSync("sha256", k.encryptionKey, "keyfob", "admin-try-result", 32)))),
  ).toBeUndefined();

  const genuine = accountLinkNonce(k, account);
  expect(checkAccountLinkNonce(k, account, genuine)).toBe(true);
  const expires = genuine.slice(0, 8);
  const withEncryptionKey = `${expires}${createHmac("sha256", k.encryptionKey).update(`link-wallet:${account}:${expires}`).digest("hex").slice(0, 32)}`;
  expect(checkAccountLinkNonce(k, account, withEncryptionKey)).toBe(false);
});
