import { describe, expect, it } from "vitest";
import { redirectUriProblem } from "./redirect-uri";

describe("redirectUriProblem", () => {
  it.each([
    "https://app.example.com/callback",
    "https://app.example.com:8443/cb?x=1",
    "http://localhost:3000",
    "http://localhost:8080/callback",
    "http://127.0.0.1:9000/cb",
    "http://[::1]:9000/cb",
  ])("accepts %s", (uri) => expect(redirectUriProblem(uri)).toBeUndefined());

  it.each([
    ["http://app.example.com/cb", /http is allowed only on localhost/],
    ["https://app.example.com/cb#frag", /fragment/],
    ["/callback", /absolute/],
    ["javascript:alert(1)", /https/],
    ["https://user:pw@app.example.com/", /credentials/],
    [" https://app.example.com/", /white space/],
    ["http://localhost.evil.com/", /http is allowed only on localhost/],
  ])("refuses %s", (uri, reason) => expect(redirectUriProblem(uri)).toMatch(reason));
});
