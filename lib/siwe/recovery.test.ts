/**
 * EIP-191 recovery with libsecp256k1 (the `secp256k1` package's addon) against viem's pure-JS
 * recovery: the same address for every signature viem recovers, nothing for what it refuses, and
 * viem on a platform where the addon does not load.
 */
import { randomBytes } from "node:crypto";
import { hexToBigInt, numberToHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRecovery, recoverInThread, recoverWithLibsecp256k1, recoverWithViem } from "./recovery";

/** The order of secp256k1's group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const r = (sig: Hex) => hexToBigInt(`0x${sig.slice(2, 66)}`);
const s = (sig: Hex) => hexToBigInt(`0x${sig.slice(66, 130)}`);
const v = (sig: Hex) => parseInt(sig.slice(130), 16);
const word = (value: bigint) => numberToHex(value, { size: 32 }).slice(2);
const signature = (rValue: bigint, sValue: bigint, vValue: number) =>
  `0x${word(rValue)}${word(sValue)}${vValue.toString(16).padStart(2, "0")}` as Hex;

/** A message of random length and characters (ASCII, accents, emoji, newlines), sometimes empty. */
function randomMessage(): string {
  const alphabet = ["a", "Z", "0", " ", "\n", "é", "ß", "漢", "🦊", "-", ":"];
  return Array.from({ length: randomBytes(1)[0] % 80 }, () => alphabet[randomBytes(1)[0] % alphabet.length]).join("");
}

/** Signatures by random keys of random messages, as wallets send them (v = 27/28). */
async function signed(count: number) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = randomMessage();
      return { address: account.address, message, signature: await account.signMessage({ message }) };
    }),
  );
}

const libsecp256k1 = recoverWithLibsecp256k1!;

describe("recoverWithLibsecp256k1", () => {
  it("is loaded on this platform, and is what recoverInThread and createRecovery use", () => {
    expect(recoverWithLibsecp256k1).toBeTypeOf("function");
    expect(recoverInThread).toBe(recoverWithLibsecp256k1);
    expect(recoverInThread).not.toBe(recoverWithViem);
    const recovery = createRecovery(4);
    expect([recovery.engine, recovery.threads]).toEqual(["libsecp256k1", 0]);
    expect(createRecovery(0, "viem").engine).toBe("viem");
  });

  it("recovers the signer's address, as viem does, for random keys and messages with v as 27/28 and as 0/1", async () => {
    const samples = await signed(60);
    for (const { address, message, signature: sig } of samples) {
      expect([27, 28]).toContain(v(sig));
      const yParity = signature(r(sig), s(sig), v(sig) - 27);
      for (const form of [sig, yParity, `0x${sig.slice(2).toUpperCase()}` as Hex]) {
        const [fast, reference] = await Promise.all([libsecp256k1(message, form), recoverWithViem(message, form)]);
        expect(fast, `${JSON.stringify(message)} ${form}`).toBe(address);
        expect(reference).toBe(address);
      }
      // The other parity recovers another key, the same one for both.
      const flipped = signature(r(sig), s(sig), v(sig) === 27 ? 28 : 27);
      const other = await libsecp256k1(message, flipped);
      expect(other).not.toBe(address);
      expect(other).toBe(await recoverWithViem(message, flipped));
      // Another message recovers another address.
      expect(await libsecp256k1(`${message}.`, sig)).not.toBe(address);
    }
  });

  it("agrees with viem on the malleable twin (n - s, the other parity) and on random 65-byte values", async () => {
    for (const { address, message, signature: sig } of await signed(10)) {
      const twin = signature(r(sig), N - s(sig), v(sig) === 27 ? 28 : 27);
      expect(await recoverWithViem(message, twin)).toBe(address);
      expect(await libsecp256k1(message, twin)).toBe(address);
    }
    let recovered = 0;
    for (let i = 0; i < 60; i++) {
      const random = `0x${randomBytes(64).toString("hex")}${[0, 1, 27, 28][i % 4].toString(16).padStart(2, "0")}` as Hex;
      const message = randomMessage();
      const fast = await libsecp256k1(message, random);
      expect(fast, random).toBe(await recoverWithViem(message, random));
      if (fast) recovered++;
    }
    expect(recovered).toBeGreaterThan(0); // about half the random r values are x-coordinates of a point
  });

  it("recovers nothing, like viem, from a malformed signature", async () => {
    const [{ message, signature: sig }] = await signed(1);
    const malformed: Record<string, Hex> = {
      "64 bytes (EIP-2098 compact form)": sig.slice(0, 130) as Hex,
      "66 bytes": `${sig}00`,
      "64 bytes and a v": `${sig.slice(0, 128)}${sig.slice(130)}` as Hex,
      empty: "0x",
      "not hex": `0x${"zz".repeat(65)}`,
      "no 0x prefix": sig.slice(2) as Hex,
      ...Object.fromEntries([2, 26, 29, 35, 36, 255].map((bad) => [`v = ${bad}`, signature(r(sig), s(sig), bad)])),
      "r = 0": signature(0n, s(sig), v(sig)),
      "s = 0": signature(r(sig), 0n, v(sig)),
      "r = n": signature(N, s(sig), v(sig)),
      "s = n": signature(r(sig), N, v(sig)),
      "s = n + 1": signature(r(sig), N + 1n, v(sig)),
      "s = 2^256 - 1": signature(r(sig), 2n ** 256n - 1n, v(sig)),
    };
    for (const [what, bad] of Object.entries(malformed)) {
      expect(await libsecp256k1(message, bad), what).toBeUndefined();
      expect(await recoverWithViem(message, bad), what).toBeUndefined();
    }
  });
});

describe("without the addon", () => {
  afterEach(() => {
    vi.doUnmock("node:module");
    vi.resetModules();
  });

  it("falls back to viem: recoverInThread is recoverWithViem, and it still recovers", async () => {
    // This mock stands in for a platform without the addon (no prebuilt binary, no compiler):
    // loading `secp256k1/bindings` throws there as it does here.
    const asked: string[] = [];
    vi.doMock("node:module", async (importOriginal) => {
      const original = await importOriginal<typeof import("node:module")>();
      const createRequire = (url: string | URL) => {
        const real = original.createRequire(url);
        return Object.assign((id: string) => {
          asked.push(id);
          if (id.startsWith("secp256k1"))
            throw Object.assign(new Error(`No native build was found for ${id}`), { code: "MODULE_NOT_FOUND" });
          return real(id);
        }, real);
      };
      return { ...original, createRequire, default: { ...original, createRequire } };
    });
    vi.resetModules();
    const fresh = await import("./recovery");

    expect(asked).toContain("secp256k1/bindings");
    expect(fresh.recoverWithLibsecp256k1).toBeUndefined();
    expect(fresh.recoverInThread).toBe(fresh.recoverWithViem);
    expect(fresh.createRecovery(0).engine).toBe("viem");
    expect(() => fresh.createRecovery(0, "libsecp256k1")).toThrow(/could not be loaded/);

    for (const { address, message, signature: sig } of await signed(5)) {
      expect(await fresh.recoverInThread(message, sig)).toBe(address);
      expect(await fresh.recoverInThread(message, signature(r(sig), s(sig), v(sig) - 27))).toBe(address);
      expect(await fresh.recoverInThread(message, signature(r(sig), N, v(sig)))).toBeUndefined();
    }
  });
});
