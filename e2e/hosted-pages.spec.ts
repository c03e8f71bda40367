/**
 * The hosted pages as a person meets them, in real Chromium against the built server: the
 * application's brand (logo with a fixed size and a fallback, name first, Keyfob's mark second,
 * a favicon), the sentence saying where the person goes back and what is shared (its WCAG
 * contrast, computed here), dark mode, languages (ui_locales, Accept-Language), focus after an
 * error, one notice for a wrong network, the refusal page (status, content, escaping, and its
 * weight in scripts against the login page's), and accessibility: names, labels, landmarks, and
 * axe-core's WCAG A/AA rules on every page and state, in light and dark mode.
 */
import { expect, test, type Page } from "@playwright/test";
import { generatePrivateKey } from "viem/accounts";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import {
  authorizeUrl,
  backAtApplication,
  CHAIN_ID,
  colours,
  contrastRatio,
  hostedLoginSetup,
  registerClient,
} from "./support/hosted-login";
import { installWallet } from "./support/wallet";

const { store, db, app } = hostedLoginSetup();

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" fill="#0ea5e9"/></svg>`;

/** Every button and link has a name, every image a text alternative, the page one h1 and a language. */
async function expectAccessibleBasics(page: Page) {
  const problems = await page.evaluate(() => {
    const found: string[] = [];
    const name = (el: Element) => (el.getAttribute("aria-label") ?? (el as HTMLElement).innerText ?? el.textContent ?? "").trim();
    for (const el of document.querySelectorAll("button, a[href]"))
      if (!name(el) && (el as HTMLElement).offsetParent !== null) found.push(`unnamed ${el.outerHTML.slice(0, 80)}`);
    for (const img of document.querySelectorAll("img")) if (!img.hasAttribute("alt")) found.push(`img without alt ${img.src.slice(0, 60)}`);
    for (const svg of document.querySelectorAll("svg"))
      if (svg.getAttribute("aria-hidden") !== "true" && !svg.getAttribute("aria-label")) found.push("svg without label or aria-hidden");
    if (document.querySelectorAll("h1").length !== 1) found.push(`${document.querySelectorAll("h1").length} h1`);
    if (!document.querySelector("main")) found.push("no main landmark");
    if (!document.documentElement.lang) found.push("no lang");
    for (const id of Array.from(document.querySelectorAll("[aria-describedby],[aria-labelledby],[aria-controls]")).flatMap((el) =>
      ["aria-describedby", "aria-labelledby"].flatMap((a) => el.getAttribute(a)?.split(" ") ?? []),
    ))
      if (!document.getElementById(id)) found.push(`dangling reference #${id}`);
    return found;
  });
  expect(problems).toEqual([]);
}

test.describe("the application's brand", () => {
  test("the client's logo (https, fixed size) and name lead the page; Keyfob's mark follows; a favicon", async ({ page }) => {
    await page.route("https://logos.example/**", (route) => route.fulfill({ contentType: "image/svg+xml", body: LOGO }));
    const client = await registerClient(store, app, "Acme Fleet", { logoUrl: "https://logos.example/acme.svg" });
    await page.goto(authorizeUrl(app, { client_id: client.id }));
    const logo = page.getByTestId("client-logo");
    await expect(logo).toHaveAttribute("src", "https://logos.example/acme.svg");
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await logo.boundingBox()).toMatchObject({ width: 56, height: 56 });
    await expect(page.getByTestId("client-name")).toHaveText("Acme Fleet");
    // The application first, then the card's heading, then Keyfob's own mark.
    const order = await page.evaluate(() => {
      const y = (el: Element | null) => el!.getBoundingClientRect().top;
      return [
        y(document.querySelector("[data-testid=client-logo]")),
        y(document.querySelector("h1")),
        y(Array.from(document.querySelectorAll("p")).find((p) => p.textContent?.includes("Secured by Keyfob"))!),
      ];
    });
    expect(order).toEqual([...order].sort((a, b) => a - b));
    await expect(page.getByText("Secured by Keyfob")).toBeVisible();

    const icon = await page.request.get("/icon.svg");
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toContain("image/svg+xml");
    await expect(page.locator('link[rel="icon"]')).toHaveAttribute("href", /icon\.svg/);
    await expectAccessibleBasics(page);
    await expectNoAxeViolations(page, "the login page with the application's logo");
  });

  test("a logo that does not load, a non-https logo, or none: the application's initial instead", async ({ page }) => {
    await page.route("https://logos.example/**", (route) => route.fulfill({ status: 404, body: "" }));
    const broken = await registerClient(store, app, "Zephyr Mobility", { logoUrl: "https://logos.example/missing.png" });
    await page.goto(authorizeUrl(app, { client_id: broken.id }));
    await expect(page.getByTestId("client-logo-fallback")).toHaveText("Z");
    await expect(page.getByTestId("client-logo")).toHaveCount(0);
    await expectNoAxeViolations(page, "the login page with the application's initial for a logo");

    // Only https logos are shown: one stored otherwise (the registry refuses them) is never fetched.
    const plain = await registerClient(store, app, "beta fleet");
    await db.client.update({ where: { id: plain.id }, data: { logoUrl: "http://logos.example/beta.png" } });
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.goto(authorizeUrl(app, { client_id: plain.id }));
    await expect(page.getByTestId("client-logo-fallback")).toHaveText("B");
    expect(requested.filter((url) => url.includes("beta.png"))).toEqual([]);
  });
});

test.describe("trust: where the person goes back, and what is shared", () => {
  for (const scheme of ["light", "dark"] as const) {
    test(`the sentence meets WCAG AA contrast (${scheme})`, async ({ page }) => {
      const client = await registerClient(store, app, "Acme Fleet");
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(authorizeUrl(app, { client_id: client.id }));
      const sentence = page.getByTestId("disclosure");
      await expect(sentence).toContainText(`sends you back to ${new URL(app.url).host}`);
      await expect(sentence).toContainText("shares your account address with Acme Fleet");
      const { text, background } = await colours(page, "[data-testid=disclosure]");
      const ratio = contrastRatio(text, background);
      const measured = `${scheme}: ${ratio.toFixed(2)}:1 (text ${text}, background ${background})`;
      test.info().annotations.push({ type: "contrast", description: measured });
      console.log(`contrast of the return-and-share sentence, ${measured}`);
      expect(ratio).toBeGreaterThanOrEqual(4.5);
    });
  }
});

test.describe("dark mode", () => {
  const luminance = ([r, g, b]: number[]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;

  test("the login, error, account and refusal pages follow prefers-color-scheme", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(authorizeUrl(app, { client_id: client.id }));
      const card = await colours(page, "[data-testid=card] h1");
      const expectScheme = (c: { text: number[]; background: number[] }, where: string) => {
        if (scheme === "dark") {
          expect(luminance(c.background), where).toBeLessThan(0.2);
          expect(luminance(c.text), where).toBeGreaterThan(0.8);
        } else {
          expect(luminance(c.background), where).toBeGreaterThan(0.9);
          expect(luminance(c.text), where).toBeLessThan(0.2);
        }
        expect(contrastRatio(c.text, c.background), where).toBeGreaterThanOrEqual(4.5);
      };
      expectScheme(card, "login page");
      await expectNoAxeViolations(page, "the login page", { schemes: [scheme] });
      await page.goto("/auth/error?reason=expired");
      expectScheme(await colours(page, "[data-testid=card] h1"), "error page");
      await expectNoAxeViolations(page, "the error page", { schemes: [scheme] });
      await page.goto("/account");
      expectScheme(await colours(page, "[data-testid=card] h1"), "account page");
      await expectNoAxeViolations(page, "the account page, signed out", { schemes: [scheme] });
      await page.goto(authorizeUrl(app, { client_id: "no-such-client" }));
      expectScheme(await colours(page, "h1"), "refusal page");
      await expectNoAxeViolations(page, "the refusal page", { schemes: [scheme] });
      await page.goto("/session/end?id_token_hint=garbage");
      expectScheme(await colours(page, "h1"), "logout error page");
      await expectNoAxeViolations(page, "the logout error page", { schemes: [scheme] });
    }
  });
});

test.describe("languages", () => {
  test("ui_locales=de gives a German login page, kept with the interaction; discovery lists the languages", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    await page.goto(authorizeUrl(app, { client_id: client.id, ui_locales: "de-CH en" }));
    await expect(page.getByRole("heading", { name: "Anmelden" })).toBeVisible();
    await expect(page.getByText("um mit Acme Fleet fortzufahren")).toBeVisible();
    await expect(page.getByRole("button", { name: "Weiter mit einem Passkey" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Weiter mit einer Wallet" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Weiter mit Google" })).toBeVisible();
    await expect(page.getByTestId("disclosure")).toContainText("Nach der Anmeldung leitet Keyfob Sie zu");
    await expect(page.locator("main")).toHaveAttribute("lang", "de");
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page).toHaveTitle("Anmelden · Keyfob");
    // A reload keeps the language: it is the interaction's, not the URL's. The first HTML says it already.
    const reloaded = await page.reload();
    expect(await reloaded!.text()).toMatch(/^<!DOCTYPE html><html lang="de"/);
    await expect(page.getByRole("heading", { name: "Anmelden" })).toBeVisible();
    await expectAccessibleBasics(page);
    await expectNoAxeViolations(page, "the German login page");

    const discovery = await (await page.request.get("/.well-known/openid-configuration")).json();
    expect(discovery.ui_locales_supported).toEqual(["en", "de"]);
  });

  test("Accept-Language chooses when ui_locales does not; ui_locales wins when both are given", async ({ browser }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const context = await browser.newContext({ locale: "de-DE", extraHTTPHeaders: { "Accept-Language": "de-DE,de;q=0.9,en;q=0.5" } });
    const page = await context.newPage();
    await page.goto(`${baseURL}${authorizeUrl(app, { client_id: client.id })}`);
    await expect(page.getByRole("heading", { name: "Anmelden" })).toBeVisible();
    await page.goto(`${baseURL}${authorizeUrl(app, { client_id: client.id, ui_locales: "en" })}`);
    await expect(page.getByRole("heading", { name: "Sign in", exact: true })).toBeVisible();

    // The refusal page, the error page, the account page and the logout pages speak German too.
    await page.goto(`${baseURL}${authorizeUrl(app, { client_id: "no-such-client" })}`);
    await expect(page.getByRole("heading", { name: "Dieser Anmeldelink funktioniert nicht" })).toBeVisible();
    await expect(page.locator("main")).toContainText("Diese Anwendung ist unbekannt oder deaktiviert.");
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await page.goto(`${baseURL}/auth/error?reason=expired`);
    await expect(page.getByRole("main").getByRole("alert")).toContainText("Diese Anmeldung ist abgelaufen");
    const account = await page.goto(`${baseURL}/account`);
    await expect(page.getByRole("heading", { name: "Ihr Keyfob-Konto" })).toBeVisible();
    expect(await account!.text()).toMatch(/^<!DOCTYPE html><html lang="de"/);
    const device = await page.goto(`${baseURL}/device`);
    expect(await device!.text()).toMatch(/^<!DOCTYPE html><html lang="de"/);
    await page.goto(`${baseURL}/session/end?client_id=${encodeURIComponent(client.id)}`);
    await expect(page.getByRole("heading", { name: "Von Keyfob abmelden?" })).toBeVisible();
    await page.goto(`${baseURL}/session/end?ui_locales=en`);
    await expect(page.getByRole("heading", { name: "Sign out of Keyfob?" })).toBeVisible();
    await context.close();
  });

  test("the wallet's messages are translated too, and a German sign-in completes", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    wallet.rejectSignatures(true);
    await page.goto(authorizeUrl(app, { client_id: client.id, ui_locales: "de", state: "st-de" }));
    await page.getByRole("button", { name: "Weiter mit einer Wallet" }).click();
    await expect(page.getByRole("main").getByRole("alert")).toContainText("Signatur abgelehnt");
    wallet.rejectSignatures(false);
    await page.getByRole("button", { name: "Erneut versuchen" }).click();
    expect((await backAtApplication(page, app)).get("state")).toBe("st-de");
  });
});

test.describe("errors and focus", () => {
  test("after an error, focus is on the message, and Try again is the next stop", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    wallet.rejectSignatures(true);
    await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-focus" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const alert = page.getByTestId("wallet-problem");
    await expect(alert).toContainText("Signature declined");
    await expect(alert).toBeFocused();
    await expectNoAxeViolations(page, "the login page after a declined signature");
    await page.keyboard.press("Tab");
    await expect(page.getByRole("button", { name: "Try again" })).toBeFocused();
    wallet.rejectSignatures(false);
    await page.keyboard.press("Enter");
    expect((await backAtApplication(page, app)).get("state")).toBe("st-focus");
  });

  test("a wallet on another network gets one notice, which also says when the switch was refused", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: 137 });
    wallet.rejectSwitches(true);
    await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-net" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const notices = page.getByRole("main").locator("[role=alert], [role=status]");
    await expect(page.getByTestId("wrong-chain")).toContainText("Your wallet is on Polygon");
    await expect(page.getByTestId("wrong-chain")).toBeFocused();
    await expect(notices).toHaveCount(1);
    await expectNoAxeViolations(page, "the login page with a wallet on another network");
    await page.getByRole("button", { name: "Switch to Ethereum and sign" }).click();
    await expect(page.getByTestId("wrong-chain")).toContainText("Your wallet stayed on its network.");
    await expect(notices).toHaveCount(1);
    await expectNoAxeViolations(page, "the login page after a refused network switch");
    await page.getByRole("button", { name: "Sign anyway" }).click();
    expect((await backAtApplication(page, app)).get("state")).toBe("st-net");
  });

  test("without a wallet: a link to get one, which opens in a new tab", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    await page.goto(authorizeUrl(app, { client_id: client.id }));
    const hint = page.getByTestId("no-wallet-hint");
    await expect(hint).toContainText("No browser wallet detected in this browser.");
    const link = hint.getByRole("link", { name: /Get a wallet/ });
    await expect(link).toHaveAttribute("href", "https://ethereum.org/en/wallets/find-wallet/");
    await expect(link).toHaveAttribute("target", "_blank");
    await expect(link).toHaveAttribute("rel", /noopener/);
    await expectNoAxeViolations(page, "the login page without a browser wallet");
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const notice = page.getByTestId("wallet-problem");
    await expect(notice).toContainText("No wallet found in this browser");
    await expect(notice).toContainText("You can also continue with Google, Apple or a passkey above.");
    await expect(notice).toBeFocused();
    await expect(notice.getByRole("link", { name: /Get a wallet/ })).toBeVisible();
    await expect(notice.getByRole("button", { name: "Try again" })).toBeVisible();
    await expectNoAxeViolations(page, "the login page after no wallet was found");
  });
});

test.describe("the refusal page", () => {
  test("an unregistered redirect_uri: 400, what was received (escaped), what to check, never a redirect", async ({ page, request }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const hostile = `https://evil.example/cb?x=<script>alert(1)</script>&y="quoted"`;
    const url = authorizeUrl(app, { client_id: client.id, redirect_uri: hostile });
    const raw = await request.get(url, { maxRedirects: 0 });
    expect(raw.status()).toBe(400);
    expect(raw.headers().location).toBeUndefined();
    const html = await raw.text();
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).not.toMatch(/<script[\s>]/i);

    const hits = app.hits.length;
    await page.goto(url);
    const main = page.getByRole("main");
    await expect(page.getByRole("heading", { name: "This sign-in link doesn't work" })).toBeVisible();
    await expect(main).toContainText("The redirect_uri is not registered for this application.");
    await expect(main.locator("code").nth(0)).toHaveText(client.id);
    await expect(main.locator("code").nth(1)).toHaveText(hostile);
    await expect(main).toContainText(
      "its developers should check that the client ID is registered with Keyfob and enabled, and that the redirect URI is registered for it exactly as sent",
    );
    expect(app.hits.length).toBe(hits);
    await expectNoAxeViolations(page, "the refusal page of an unregistered redirect_uri");
  });

  test("loads no script at all, where the login page loads the wallet code; the error page stays small", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const scripts = async (url: string, then?: () => Promise<void>) => {
      const responses: Promise<{ url: string; bytes: number; wallet: boolean }>[] = [];
      let pending = 0;
      const isScript = (request: import("@playwright/test").Request) => request.resourceType() === "script";
      const started = (request: import("@playwright/test").Request) => void (isScript(request) && pending++);
      const ended = (request: import("@playwright/test").Request) => void (isScript(request) && pending--);
      const listener = (response: import("@playwright/test").Response) => {
        if (isScript(response.request())) {
          responses.push(
            response.body().then((body) => ({ url: response.url(), bytes: body.length, wallet: body.includes("eth_requestAccounts") })),
          );
        }
      };
      page.on("request", started);
      page.on("requestfinished", ended);
      page.on("requestfailed", ended);
      page.on("response", listener);
      const html = await (await page.goto(url))!.text();
      await then?.();
      await page.waitForLoadState("networkidle");
      // Every script asked for is in (the load state was reached before `then` asked for more), and
      // so read before the next page: one still coming would be counted as the next page's.
      await expect.poll(() => pending).toBe(0);
      page.off("request", started);
      page.off("requestfinished", ended);
      page.off("requestfailed", ended);
      page.off("response", listener);
      const loaded = await Promise.all(responses);
      return { html, loaded, bytes: loaded.reduce((sum, s) => sum + s.bytes, 0), wallet: loaded.some((s) => s.wallet) };
    };
    // The wallet code loads when the person heads for the wallet button, once React has hydrated it.
    // Pointing at the server-rendered button before that does nothing, and no load state says when
    // hydration is done on a busy machine: point again until the code is asked for.
    const login = await scripts(authorizeUrl(app, { client_id: client.id }), async () => {
      const wallet = page.getByRole("button", { name: "Continue with a wallet" });
      await expect(async () => {
        const walletCode = page.waitForResponse(
          async (response) => response.request().resourceType() === "script" && (await response.text()).includes("eth_requestAccounts"),
          { timeout: 2_000 },
        );
        await page.mouse.move(0, 0);
        await wallet.hover();
        await walletCode;
      }).toPass({ timeout: 30_000 });
    });
    const refusal = await scripts(authorizeUrl(app, { client_id: client.id, redirect_uri: "https://elsewhere.example/cb" }));
    const error = await scripts("/auth/error?reason=expired");
    // What each page loads beyond the framework (React, Next's runtime) that every Next page shares.
    const own = (of: typeof login, other: typeof login) =>
      of.loaded.filter((s) => !other.loaded.some((o) => o.url === s.url)).reduce((sum, s) => sum + s.bytes, 0);
    const loginOwn = own(login, error);
    const errorOwn = own(error, login);
    const measured = `login page ${login.bytes} (${login.loaded.length} files, ${loginOwn} its own); refusal page ${refusal.bytes} (${refusal.loaded.length} files); /auth/error ${error.bytes} (${error.loaded.length} files, ${errorOwn} its own)`;
    test.info().annotations.push({ type: "script bytes", description: measured });
    console.log(`script bytes: ${measured}`);
    expect(login.wallet).toBe(true);
    // The refusal page: not one script, not even inline.
    expect(refusal.loaded).toEqual([]);
    expect(refusal.html).not.toMatch(/<script/i);
    expect(refusal.bytes).toBeLessThan(login.bytes * 0.05);
    // The error page: no wallet code, and a small part of the login page's own code.
    expect(error.wallet).toBe(false);
    expect(error.bytes).toBeLessThan(login.bytes);
    expect(errorOwn).toBeLessThan(loginOwn * 0.1);
  });
});
