/**
 * `npm run dev` serves the protocol routes from Keyfob's own server, as `npm start` does (issue 30:
 * one way in, in every mode): its answer to /token comes from the route table (no Next.js headers),
 * while a page endpoint (/auth) is still Next's, in development mode. Run once here: it starts a
 * real development server on the suite's database (about 10 s).
 */
import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { freePort } from "../scripts/free-port";

/** Next.js's own Vary on the answers it serves (its router's request headers). */
const NEXT_VARY = /next-router-state-tree/;

it("answers the protocol routes from the route table and the pages from Next.js", { timeout: 120_000 }, async () => {
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const child = spawn("npm", ["run", "dev"], {
    // Not vitest's NODE_ENV=test, with which Next.js serves neither development nor production.
    env: { ...process.env, NODE_ENV: "development", PORT: String(port), ISSUER_URL: issuer, KEYFOB_LOG: "silent" },
    stdio: "ignore",
    detached: true,
  });
  try {
    let discovery: Response | undefined;
    for (let tries = 0; tries < 600 && !discovery?.ok; tries++) {
      discovery = await fetch(`${issuer}/.well-known/openid-configuration`).catch(() => undefined);
      if (!discovery?.ok) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await discovery!.json()).issuer).toBe(issuer);
    const token = await fetch(`${issuer}/token`, { method: "POST", body: new URLSearchParams({ grant_type: "password" }) });
    expect(token.status).toBe(400);
    expect((await token.json()).error).toBe("unsupported_grant_type");
    expect(token.headers.get("vary")).toBe("Origin");
    const page = await fetch(`${issuer}/auth?client_id=kf_nobody`);
    expect(page.status).toBe(400);
    expect(page.headers.get("vary")).toMatch(NEXT_VARY);
  } finally {
    // npm, tsx watch and the server: the whole group.
    process.kill(-child.pid!, "SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
});
