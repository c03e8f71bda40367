import { hashMessage, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { flowAVectors } from "../../test/support/vectors";
import { verifySignature, type SignatureCheck } from "./signature";

const { challenge, signature } = flowAVectors;
const wallet = signature.recovers_to;

/** v of 27/28 rewritten as 0/1, as some wallets send it. */
const withYParity = (sig: string) => `${sig.slice(0, -2)}${(parseInt(sig.slice(-2), 16) - 27).toString(16).padStart(2, "0")}`;

function check(overrides: Partial<SignatureCheck> = {}): SignatureCheck {
  return {
    message: challenge.text,
    address: wallet,
    signature: signature.signature,
    ...overrides,
  };
}

describe("verifySignature", () => {
  it("hashes the challenge as the vector says (EIP-191)", () => {
    expect(hashMessage(challenge.text)).toBe(signature.eip191_hash);
  });

  it("accepts the known signature of the vector's challenge, with v as 27/28 or 0/1", async () => {
    await expect(verifySignature(check())).resolves.toBe("wallet");
    await expect(verifySignature(check({ signature: withYParity(signature.signature) }))).resolves.toBe("wallet");
  });

  it("refuses a signature of another text", async () => {
    await expect(verifySignature(check({ message: `${challenge.text} ` }))).rejects.toMatchObject({ code: "invalid_grant" });
  });

  it("accepts an enabled signer of a license only when the address is the license (client_id)", async () => {
    const signerKey = generatePrivateKey();
    const signer = privateKeyToAccount(signerKey);
    const license = "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9";
    const sig = await signer.signMessage({ message: challenge.text });
    const seen: string[] = [];
    const client = {
      id: license,
      isSigner: async (address: string) => {
        seen.push(address);
        return address === signer.address;
      },
    };
    await expect(verifySignature(check({ address: license, client, signature: sig }))).resolves.toBe("signer");
    expect(seen).toEqual([signer.address]);
    // Same signer, but the challenge is for another address than the license: refused.
    await expect(verifySignature(check({ address: wallet, client, signature: sig }))).rejects.toMatchObject({ code: "invalid_grant" });
  });

  it.each([
    ["not hex", "hello"],
    ["no 0x prefix", signature.signature.slice(2)],
    ["too short", signature.signature.slice(0, 100)],
    ["odd length", `${signature.signature}0`],
  ])("refuses a malformed signature (%s) as invalid_request", async (_, sig) => {
    await expect(verifySignature(check({ signature: sig }))).rejects.toMatchObject({ code: "invalid_request", status: 400 });
  });

  it("refuses, without crashing, a 65-byte signature that is not a curve point and a longer one when no chain is configured", async () => {
    const zeros = `0x${"00".repeat(64)}1b` as Hex;
    await expect(verifySignature(check({ signature: zeros }))).rejects.toMatchObject({ code: "invalid_grant" });
    const long = `0x${"ab".repeat(200)}` as Hex;
    await expect(verifySignature(check({ signature: long }))).rejects.toMatchObject({ code: "invalid_grant" });
  });

  it("refuses the malleable twin of a valid signature (high s, EIP-2), which recovers to the same address", async () => {
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const r = signature.signature.slice(2, 66);
    const s = BigInt(`0x${signature.signature.slice(66, 130)}`);
    const v = parseInt(signature.signature.slice(130, 132), 16);
    const twin = `0x${r}${(n - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
    const { recoverMessageAddress } = await import("viem");
    expect(await recoverMessageAddress({ message: challenge.text, signature: twin })).toBe(wallet);
    await expect(verifySignature(check({ signature: twin }))).rejects.toMatchObject({
      code: "invalid_grant",
      message: expect.stringMatching(/EIP-2/),
    });
  });
});

describe("signature recovery on worker threads", () => {
  it("recovers the vector's signer, and nothing from a signature that is not a curve point", async () => {
    const { createRecovery } = await import("./recovery");
    const recover = createRecovery(2);
    const [first, second, invalid] = await Promise.all([
      recover(challenge.text, signature.signature),
      recover(challenge.text, withYParity(signature.signature) as Hex),
      recover(challenge.text, `0x${"00".repeat(64)}1b`),
    ]);
    expect([first, second]).toEqual([wallet, wallet]);
    expect(invalid).toBeUndefined();
    await expect(verifySignature(check(), { recover })).resolves.toBe("wallet");
  });
});
