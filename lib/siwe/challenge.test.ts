import { parseSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { flowAVectors } from "../../test/support/vectors";
import { createChallengeMessage, formatIssuedAt, generateNonce } from "./challenge";

const v = flowAVectors.challenge;

describe("Flow A challenge", () => {
  it("matches the platform's challenge byte for byte", () => {
    const text = createChallengeMessage({
      issuerUrl: v.issuer_url,
      domain: v.domain,
      address: v.address_as_sent,
      chainId: v.chain_id,
      nonce: v.nonce,
      issuedAt: new Date(v.issued_at),
    });
    expect(text).toBe(v.text);
  });

  it("parses as an EIP-4361 message", () => {
    const parsed = parseSiweMessage(v.text);
    expect(parsed).toMatchObject({
      domain: "auth.dimo.zone",
      address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      statement: "localhost is asking you sign in.",
      uri: "https://auth.dimo.zone",
      version: "1",
      chainId: 1,
      nonce: v.nonce,
    });
    expect(parsed.issuedAt?.toISOString()).toBe("2024-05-09T16:11:21.000Z");
  });

  it("keeps the issuer's port and drops the domain's", () => {
    const text = createChallengeMessage({
      issuerUrl: "http://localhost:3000",
      domain: "https://app.example.com:8443/callback",
      address: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      chainId: 137,
      nonce: "a".repeat(30),
      issuedAt: new Date("2026-01-02T03:04:05.678Z"),
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("localhost:3000 wants you to sign in with your Ethereum account:");
    expect(lines[3]).toBe("app.example.com is asking you sign in.");
    expect(lines[7]).toBe("Chain ID: 137");
    expect(lines.at(-1)).toBe("Issued At: 2026-01-02T03:04:05Z");
    expect(text.endsWith("\n")).toBe(false);
    expect(parseSiweMessage(text).domain).toBe("localhost:3000");
  });

  it("draws nonces of 30 alphanumeric characters", () => {
    const nonces = new Set(Array.from({ length: 1000 }, generateNonce));
    expect(nonces.size).toBe(1000);
    for (const nonce of nonces) expect(nonce).toMatch(/^[0-9a-zA-Z]{30}$/);
    // Every character class shows up: the alphabet is not truncated.
    const all = [...nonces].join("");
    expect(all).toMatch(/[0-9]/);
    expect(all).toMatch(/[a-z]/);
    expect(all).toMatch(/Z/);
  });

  it("formats Issued At with second precision in UTC", () => {
    expect(formatIssuedAt(new Date("2024-05-09T16:11:21.999Z"))).toBe("2024-05-09T16:11:21Z");
  });
});
