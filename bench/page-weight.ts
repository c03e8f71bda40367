import { createHash, randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";

export type PageWeight = { files: number; gzipBytes: number };

/**
 * The hosted login page's first-load JavaScript, as a browser gets it: the scripts its HTML names
 * (Next's framework and the page's own chunks), each gzipped, summed. Chunks the page imports later
 * (WalletConnect's dialog, on a click) are not first-load and are not counted.
 */
export async function loginPageWeight(issuer: string, clientId: string, redirectUri: string): Promise<PageWeight> {
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL("/auth", issuer);
  for (const [name, value] of Object.entries({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid",
    state: "page-weight",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }))
    authorize.searchParams.set(name, value);
  // /auth answers 303 to the interaction page, bound to this browser by a cookie.
  const started = await fetch(authorize, { redirect: "manual" });
  const location = started.headers.get("location");
  if (started.status !== 303 || !location) throw new Error(`/auth answered ${started.status}, not the login page`);
  const cookie = started.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const page = await fetch(new URL(location, issuer), { headers: { cookie } });
  if (page.status !== 200) throw new Error(`the login page answered ${page.status}`);
  const html = await page.text();
  // `nomodule` scripts (Next's polyfills for browsers without ES modules) are not fetched by a modern
  // browser. React writes the attribute as `noModule=""`.
  const sources = [
    ...new Set(
      [...html.matchAll(/<script\b([^>]*)>/g)]
        .filter((m) => !/\snomodule\b/i.test(m[1]))
        .flatMap((m) => /\ssrc="([^"]+)"/.exec(m[1])?.[1].replaceAll("&amp;", "&") ?? []),
    ),
  ];
  let gzipBytes = 0;
  for (const source of sources) {
    const script = await fetch(new URL(source, issuer));
    gzipBytes += gzipSync(Buffer.from(await script.arrayBuffer()), { level: 9 }).length;
  }
  return { files: sources.length, gzipBytes };
}
