import { describe, expect, it } from "vitest";
import type { OAuthError } from "./errors";
import { parseScope } from "./scope";

describe("parseScope", () => {
  it("accepts openid with email and profile, ignoring repeats and extra spaces", () => {
    expect(parseScope("openid email")).toEqual(["openid", "email"]);
    expect(parseScope(" openid  profile openid ")).toEqual(["openid", "profile"]);
  });

  it("requires openid", () => {
    expect(() => parseScope("email")).toThrow(expect.objectContaining({ code: "invalid_scope", status: 400 }));
  });

  it("names unsupported values", () => {
    const error = (() => {
      try {
        parseScope("openid email admin");
      } catch (e) {
        return e as OAuthError;
      }
    })();
    expect(error?.code).toBe("invalid_scope");
    expect(error?.message).toContain("admin");
  });
});
