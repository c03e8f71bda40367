import { describe, expect, it } from "vitest";
import { flowAVectors } from "../../test/support/vectors";
import { decodeSubject, encodeSubject } from "./sub";

describe("sub encoding", () => {
  for (const vector of flowAVectors.sub) {
    it(`encodes ${vector.user_id}/${vector.connector} as the platform does`, () => {
      expect(encodeSubject({ userId: vector.user_id, connector: vector.connector })).toBe(vector.sub);
      expect(decodeSubject(vector.sub)).toEqual({ userId: vector.user_id, connector: vector.connector });
    });
  }

  it("uses multi-byte lengths for long ids", () => {
    const userId = "x".repeat(300);
    const sub = encodeSubject({ userId, connector: "google" });
    const bytes = Buffer.from(sub, "base64url");
    expect([...bytes.subarray(0, 3)]).toEqual([0x0a, 0xac, 0x02]); // field 1, length 300 as a varint
    expect(sub).not.toMatch(/[=+/]/);
    expect(decodeSubject(sub)).toEqual({ userId, connector: "google" });
  });

  it("refuses malformed input", () => {
    expect(() => decodeSubject(Buffer.from([0x0a, 0x05, 0x61]).toString("base64url"))).toThrow(/truncated/);
    expect(() => decodeSubject(Buffer.from([0x08, 0x01]).toString("base64url"))).toThrow(/wire type/);
  });
});
