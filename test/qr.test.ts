/**
 * The login page's QR encoder (components/login/qr.ts) against the `qrcode` package (present here
 * as a dependency of WalletConnect's packages): for the same text, version, error correction level
 * and mask, every module must match. WalletConnect pairing URIs are about 200 bytes.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { encodeQr, qrPath, type Ecl } from "@/components/login/qr";

type Reference = { version: number; maskPattern: number; modules: { size: number; get(row: number, col: number): number | boolean } };
const QRCode = createRequire(import.meta.url)("qrcode") as { create(data: unknown, options: Record<string, unknown>): Reference };

const pairingUri = () =>
  `wc:${randomBytes(32).toString("hex")}@2?relay-protocol=irn&symKey=${randomBytes(32).toString("hex")}&expiryTimestamp=${Math.floor(Date.now() / 1000) + 300}`;

describe("QR encoder", () => {
  const texts = [
    "wc:",
    "Keyfob",
    "https://keyfob.example/auth?x=ü",
    pairingUri(),
    `${pairingUri()}&methods=wc_sessionPropose`,
    "x".repeat(600),
  ];
  for (const ecl of ["L", "M", "Q", "H"] as Ecl[]) {
    it(`matches the reference module for module (level ${ecl}, every mask)`, () => {
      for (const text of texts) {
        for (let mask = 0; mask < 8; mask++) {
          const mine = encodeQr(text, ecl, { mask });
          const reference = QRCode.create([{ data: new TextEncoder().encode(text), mode: "byte" }], {
            errorCorrectionLevel: ecl,
            maskPattern: mask,
            version: mine.version,
          });
          expect(reference.version).toBe(mine.version);
          expect(mine.size).toBe(reference.modules.size);
          const theirs = Array.from({ length: mine.size }, (_, y) =>
            Array.from({ length: mine.size }, (_, x) => Boolean(reference.modules.get(y, x))),
          );
          expect(mine.modules).toEqual(theirs);
        }
      }
    });
  }

  it("picks the smallest version that holds the text, and a mask of its own", () => {
    const reference = QRCode.create([{ data: new TextEncoder().encode("Keyfob"), mode: "byte" }], { errorCorrectionLevel: "M" });
    const mine = encodeQr("Keyfob", "M");
    expect(mine.version).toBe(reference.version);
    expect(mine.mask).toBeGreaterThanOrEqual(0);
    const uri = encodeQr(pairingUri(), "M");
    expect(uri.version).toBeLessThanOrEqual(10);
    expect(qrPath(uri)).toMatch(/^M\d+,\d+h1v1h-1z/);
  });
});
