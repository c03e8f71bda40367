/**
 * What the hosted-login browser tests share: an application (a local server that records what
 * reaches its redirect URI), registered clients, authorization URLs with PKCE, and the code
 * exchange with the ID token checked against Keyfob's JWKS.
 */
import { createHash, randomBytes } from "node:crypto";
import { systemClock } from "@/lib/clock";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addRedirectUri, createClient, rotateClientSecret } from "../../lib/clients/registry";
import { createStore, rawConnection, type Store } from "../../lib/store";
import { baseURL } from "../../playwright.config";

export const CHAIN_ID = 1; // Keyfob's default CHAIN_ID

export type Application = { url: string; hits: URL[]; close: () => Promise<void> };
export type Client = { id: string; secret?: string };

/** A store on the e2e database, and the Prisma client under it to arrange and inspect rows. */
export function database() {
  const store = createStore(process.env.DATABASE_URL!, 2);
  return { store, db: rawConnection(store).db };
}

/** The application's redirect URI: a real local server that records what reached it. */
export async function startApplication(): Promise<Application> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const hit = new URL(req.url!, "http://localhost");
    // The browser fetches the application's favicon on its own, at any time: not a redirect to count.
    if (hit.pathname !== "/favicon.ico") hits.push(hit);
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Application</title><h1>Back at the application</h1>");
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}/callback`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A spec file's shared setup: the database, and an application started before the file's tests
 * and closed (with the database) after them. `app` is usable as soon as a test runs.
 */
export function hostedLoginSetup(): ReturnType<typeof database> & { app: Application } {
  const { store, db } = database();
  let started: Application | undefined;
  const current = () => {
    if (!started) throw new Error("the application is started in beforeAll, before the first test");
    return started;
  };
  const app: Application = {
    get url() {
      return current().url;
    },
    get hits() {
      return current().hits;
    },
    close: () => current().close(),
  };
  test.beforeAll(async () => {
    started = await startApplication();
  });
  test.afterAll(async () => {
    await started?.close();
    await store.close();
  });
  return { store, db, app };
}

/** A registered application: public (PKCE) or confidential (client secret), with an optional logo. */
export async function registerClient(
  store: Store,
  app: Application,
  name: string,
  options: { confidential?: boolean; logoUrl?: string } = {},
): Promise<Client> {
  const id = privateKeyToAccount(generatePrivateKey()).address;
  await createClient(store, { id, name, logoUrl: options.logoUrl });
  await addRedirectUri(store, id, app.url);
  const secret = options.confidential ? await rotateClientSecret({ store, clock: systemClock }, id) : undefined;
  return { id, secret };
}

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The PKCE pair of requests that bring none of their own. */
export const defaultPkce = pkce();

export function authorizeUrl(app: Application, params: Record<string, string | undefined>, base = "") {
  const query = new URLSearchParams({
    response_type: "code",
    scope: "openid email",
    redirect_uri: app.url,
    code_challenge: defaultPkce.challenge,
    code_challenge_method: "S256",
  });
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  return `${base}/auth?${query}`;
}

/** Waits until the browser is back at the application, and returns the response parameters. */
export async function backAtApplication(page: Page, app: Application) {
  await page.waitForURL((url) => url.href.startsWith(`${app.url}?`), { timeout: 30_000 });
  return new URL(page.url()).searchParams;
}

/** The code exchange at /token; returns the verified ID token's claims. */
export async function exchange(app: Application, client: Client, code: string, verifier = defaultPkce.verifier) {
  const jwks = createRemoteJWKSet(new URL(`${baseURL}/keys`));
  const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: app.url, code_verifier: verifier });
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (client.secret)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString("base64")}`;
  else form.set("client_id", client.id);
  const response = await fetch(`${baseURL}/token`, { method: "POST", headers, body: form });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  const { payload } = await jwtVerify(body.id_token, jwks, { issuer: baseURL, audience: client.id });
  return payload as JWTPayload & Record<string, unknown>;
}

/** WCAG 2 contrast ratio of two sRGB colours given as [r, g, b] in 0..255. */
export function contrastRatio(a: number[], b: number[]): number {
  const luminance = ([r, g, bl]: number[]) => {
    const channel = (c: number) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(bl);
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The text colour of an element and the colour behind it (the first ancestor with an opaque
 * background), as sRGB bytes: the browser paints each onto a canvas, so any CSS colour syntax
 * (Tailwind 4 writes oklch) comes out as the pixels a person sees.
 */
export async function colours(page: Page, selector: string): Promise<{ text: number[]; background: number[] }> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const toRgb = (color: string) => {
        const canvas = document.createElement("canvas");
        canvas.width = canvas.height = 1;
        const context = canvas.getContext("2d", { willReadFrequently: true })!;
        context.fillStyle = "#fff";
        context.fillRect(0, 0, 1, 1);
        context.fillStyle = color;
        context.fillRect(0, 0, 1, 1);
        return Array.from(context.getImageData(0, 0, 1, 1).data.slice(0, 3));
      };
      let node: Element | null = element;
      let background = "rgb(255, 255, 255)";
      while (node) {
        const style = getComputedStyle(node);
        const probe = toRgb(style.backgroundColor);
        const transparent =
          style.backgroundColor === "transparent" ||
          /rgba\(.*,\s*0\)$/.test(style.backgroundColor) ||
          /\/\s*0\)$/.test(style.backgroundColor);
        if (!transparent && probe) {
          background = style.backgroundColor;
          break;
        }
        node = node.parentElement;
      }
      return { text: toRgb(getComputedStyle(element).color), background: toRgb(background) };
    });
}
