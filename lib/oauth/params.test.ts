import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, readParams } from "./params";

const url = "http://localhost:3000/auth/web3/generate_challenge";
const form = { "content-type": "application/x-www-form-urlencoded" };

describe("readParams", () => {
  it("reads the query with an empty body and no Content-Type", async () => {
    const params = await readParams(new Request(`${url}?client_id=a&scope=openid+email`, { method: "POST" }));
    expect(params.get("client_id")).toBe("a");
    expect(params.get("scope")).toBe("openid email");
  });

  it("reads a form body, merged with the query", async () => {
    const request = new Request(`${url}?client_id=a`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      body: "scope=openid%20email&domain=https%3A%2F%2Fx.example",
    });
    const params = await readParams(request);
    expect([params.get("client_id"), params.get("scope"), params.get("domain")]).toEqual(["a", "openid email", "https://x.example"]);
  });

  it("reads a form body with a raw space", async () => {
    const params = await readParams(new Request(url, { method: "POST", headers: form, body: "scope=openid email" }));
    expect(params.get("scope")).toBe("openid email");
  });

  it("treats empty values as absent", async () => {
    const params = await readParams(new Request(`${url}?state=`, { method: "GET" }));
    expect(params.get("state")).toBeUndefined();
  });

  it("refuses a parameter given twice with different values, and tolerates the same value twice", async () => {
    await expect(readParams(new Request(`${url}?a=1&a=2`))).rejects.toMatchObject({ code: "invalid_request" });
    const params = await readParams(new Request(`${url}?a=1`, { method: "POST", headers: form, body: "a=1" }));
    expect(params.get("a")).toBe("1");
  });

  it("refuses other body types with 415", async () => {
    const request = new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await expect(readParams(request)).rejects.toMatchObject({ code: "invalid_request", status: 415 });
  });

  it("refuses bodies over the limit with 413, declared or streamed", async () => {
    const big = `a=${"x".repeat(MAX_BODY_BYTES)}`;
    await expect(readParams(new Request(url, { method: "POST", body: big }))).rejects.toMatchObject({ status: 413 });
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
        controller.close();
      },
    });
    const chunked = new Request(url, { method: "POST", body: stream, duplex: "half" } as RequestInit);
    await expect(readParams(chunked)).rejects.toMatchObject({ status: 413 });
  });
});
