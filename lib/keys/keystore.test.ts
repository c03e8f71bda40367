import { describe, expect, it } from "vitest";
import { currentKey, planRotation, type KeyPolicy } from "./keystore";

const HOUR = 3600;
const policy: KeyPolicy = { rotationPeriod: 24 * HOUR, publishLead: 2 * HOUR, tokenTtl: 6 * HOUR };
const at = (hours: number) => new Date(Date.UTC(2026, 0, 1) + hours * HOUR * 1000);
const key = (kid: string, hours: number) => ({ kid, activatesAt: at(hours) });

describe("key rotation schedule", () => {
  it("creates the first key to sign at once", () => {
    expect(planRotation([], at(0), policy)).toEqual({ create: at(0), expired: [] });
  });

  it("schedules a successor publishLead before the period ends, activating at the period's end", () => {
    const keys = [key("a", 0)];
    expect(planRotation(keys, at(21.9), policy).create).toBeUndefined();
    expect(planRotation(keys, at(22), policy).create).toEqual(at(24));
  });

  it("after downtime, still publishes the successor publishLead before it signs", () => {
    expect(planRotation([key("a", 0)], at(100), policy).create).toEqual(at(102));
  });

  it("does not schedule a second successor while one is upcoming", () => {
    expect(planRotation([key("a", 0), key("b", 24)], at(23), policy).create).toBeUndefined();
  });

  it("signs with the newest key whose time has come", () => {
    const keys = [key("a", 0), key("b", 24)];
    expect(currentKey(keys, at(23.99))?.kid).toBe("a");
    expect(currentKey(keys, at(24))?.kid).toBe("b");
  });

  it("keeps a retired key published until its last token has expired", () => {
    const keys = [key("a", 0), key("b", 24), key("c", 48)];
    // a retired at 24h; its tokens live 6h; one minute of clock skew.
    expect(planRotation(keys, at(30), policy).expired).toEqual([]);
    expect(planRotation(keys, at(30.02), policy).expired).toEqual(["a"]);
    expect(planRotation(keys, at(54.02), policy).expired).toEqual(["a", "b"]);
  });
});
