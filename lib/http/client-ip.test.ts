import { describe, expect, it } from "vitest";
import { addressBucket } from "./client-ip";

describe("addressBucket", () => {
  it("puts every address of one IPv6 /64 in one bucket, however the address is written", () => {
    const bucket = addressBucket("2001:db8::1:2:3:4");
    expect(bucket).toBe("2001:db8::/64");
    for (const address of [
      "2001:db8::2:2:3:4",
      "2001:db8:0:0:1::",
      "2001:0db8:0000:0000:ffff:ffff:ffff:ffff",
      "2001:DB8::",
      "2001:db8::1",
    ]) {
      expect(addressBucket(address)).toBe(bucket);
    }
  });

  it("gives different /64s different buckets", () => {
    expect(addressBucket("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(addressBucket("2001:db8:0:2::1")).toBe("2001:db8:0:2::/64");
    expect(addressBucket("2001:db8:1::1")).not.toBe(addressBucket("2001:db8::1"));
    expect(addressBucket("2001:db8:1::1")).not.toBe(addressBucket("2001:db8:0:1::1"));
  });

  it("leaves IPv4 as it is and counts IPv4-mapped IPv6 as its IPv4 address", () => {
    expect(addressBucket("203.0.113.7")).toBe("203.0.113.7");
    expect(addressBucket("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressBucket("::ffff:cb00:7107")).toBe("203.0.113.7");
  });
});
