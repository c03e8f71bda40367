/**
 * Choosing a wallet on the login page, in real Chromium against the built server:
 *
 * - Several browser wallets that announce themselves (EIP-6963, two fake providers announced by
 *   window events in an init script): the page lists them by name and icon, the chosen one signs,
 *   the other is never asked.
 * - WalletConnect (phone wallets), on a second Keyfob instance started here with
 *   WALLETCONNECT_PROJECT_ID (the main one runs without, and offers none): everything up to the
 *   relay. The connector is configured (it is offered, and the page's CSP allows the relay), the
 *   dialog opens with a pairing URI as a QR code and a wallet-app link, and Cancel returns to the
 *   page.
 *
 *   What cannot run here: WalletConnect's relay (wss://relay.walletconnect.org) is not reachable
 *   from this machine, and no phone wallet could answer through it. The relay's socket is played
 *   by a stand-in (page.routeWebSocket) that acknowledges what the page publishes and subscribes
 *   to, and nothing more: a wallet's session approval, and the personal_sign it would carry back,
 *   are not tested. Everything after the approval is the same code path as a browser wallet's.
 */
import { createHash } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { generatePrivateKey } from "viem/accounts";
import { encodeQr, qrPath } from "../components/login/qr";
import { secondInstance } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { authorizeUrl, backAtApplication, CHAIN_ID, exchange, hostedLoginSetup, registerClient } from "./support/hosted-login";
import { installAnnouncedWallets, installWallet, walletIcon } from "./support/wallet";

const { store, app } = hostedLoginSetup();

test.describe("browser wallets (EIP-6963)", () => {
  test("two announced wallets are listed by name and icon; the chosen one signs, the other is not asked", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const [orange, blue] = await installAnnouncedWallets(page, CHAIN_ID, [
      { name: "Orange Wallet", rdns: "com.example.orange", privateKey: generatePrivateKey(), icon: walletIcon("#f97316") },
      { name: "Blue Wallet", rdns: "com.example.blue", privateKey: generatePrivateKey(), icon: walletIcon("#0ea5e9") },
    ]);
    await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-6963" }));
    const main = page.getByRole("button", { name: "Continue with a wallet" });
    await expect(main).toHaveAttribute("aria-expanded", "false");
    await expect(page.getByTestId("no-wallet-hint")).toHaveCount(0);
    await main.click();
    await expect(main).toHaveAttribute("aria-expanded", "true");

    const chooser = page.getByRole("group", { name: "Choose a wallet" });
    const options = chooser.getByRole("button");
    await expect(options).toHaveText(["Orange Wallet", "Blue Wallet"]);
    await expect(options.first()).toBeFocused();
    await expect(chooser.locator("img")).toHaveCount(2);
    await expect(chooser.locator("img").nth(1)).toHaveAttribute("src", walletIcon("#0ea5e9"));
    // No plain "Browser wallet" entry: there is no window.ethereum, and no WalletConnect: not configured.
    await expect(chooser.getByRole("button", { name: /Browser wallet|WalletConnect/ })).toHaveCount(0);
    await expectNoAxeViolations(page, "the login page's list of announced wallets");

    await chooser.getByRole("button", { name: "Blue Wallet" }).click();
    const response = await backAtApplication(page, app);
    expect(response.get("state")).toBe("st-6963");
    expect(blue.requests).toEqual(expect.arrayContaining(["eth_requestAccounts", "personal_sign"]));
    expect(orange.requests).not.toContain("personal_sign");
    expect(orange.requests).not.toContain("eth_requestAccounts");
    const claims = await exchange(app, client, response.get("code")!);
    expect(claims).toMatchObject({ provider_id: "web3", ethereum_address: blue.address });
  });

  test("a window.ethereum that also announces itself is listed once, under its own name", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const other = page;
    await installWallet(other, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await other.addInitScript(() => {
      const announce = () =>
        window.dispatchEvent(
          new CustomEvent("eip6963:announceProvider", {
            detail: Object.freeze({
              info: {
                uuid: "00000000-0000-4000-8000-0000000000aa",
                name: "Plain Wallet",
                icon: "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E",
                rdns: "com.example.plain",
              },
              provider: (window as unknown as { ethereum: unknown }).ethereum,
            }),
          }),
        );
      window.addEventListener("eip6963:requestProvider", announce);
      announce();
    });
    await other.goto(authorizeUrl(app, { client_id: client.id, state: "st-once" }));
    // The same provider as window.ethereum: one wallet, by its announced name; the button uses it at once.
    await expect(other.getByRole("button", { name: "Continue with a wallet" })).not.toHaveAttribute("aria-expanded", /.*/);
    await other.getByRole("button", { name: "Continue with a wallet" }).click();
    expect((await backAtApplication(other, app)).get("state")).toBe("st-once");
  });
});

/**
 * WalletConnect's relay, played in the page (Playwright's WebSocket routing): JSON-RPC answers
 * that acknowledge every request (subscriptions get an id, publishes `true`, fetches no messages).
 * Nothing is ever delivered: no wallet is on the other side.
 */
async function standInRelay(page: Page) {
  const seen: { url: string; methods: string[] } = { url: "", methods: [] };
  await page.routeWebSocket(/^wss:\/\/relay\.walletconnect\.(org|com)/, (ws) => {
    seen.url = ws.url();
    ws.onMessage((message) => {
      let request: { id?: number; method?: string; params?: { topic?: string; topics?: string[] } };
      try {
        request = JSON.parse(String(message));
      } catch {
        return;
      }
      if (request.id === undefined || !request.method) return;
      seen.methods.push(request.method);
      const id = (topic = "") => createHash("sha256").update(topic).digest("hex");
      const result = request.method.endsWith("batchSubscribe")
        ? (request.params?.topics ?? []).map(id)
        : request.method.endsWith("subscribe") && !request.method.endsWith("unsubscribe")
          ? id(request.params?.topic)
          : /fetchMessages/i.test(request.method)
            ? { messages: [], hasMore: false }
            : true;
      ws.send(JSON.stringify({ id: request.id, jsonrpc: "2.0", result }));
    });
  });
  return seen;
}

test.describe("WalletConnect, up to the relay", () => {
  // A second Keyfob instance (same database and build), its own issuer, with WALLETCONNECT_PROJECT_ID set.
  let instance: Awaited<ReturnType<typeof secondInstance>>;
  test.beforeAll(async () => {
    test.setTimeout(180_000);
    instance = await secondInstance((url) => ({ ISSUER_URL: url, WALLETCONNECT_PROJECT_ID: "0123456789abcdef0123456789abcdef" }));
  });
  test.afterAll(async () => {
    await instance?.stop();
  });

  test("not offered without WALLETCONNECT_PROJECT_ID; the CSP then allows no relay", async ({ page }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    const response = await page.goto(authorizeUrl(app, { client_id: client.id }));
    const csp = response!.headers()["content-security-policy"];
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toContain("walletconnect");
    await expect(page.getByRole("dialog")).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Continue with a wallet" })).not.toHaveAttribute("aria-expanded", /.*/);
  });

  test("offered beside a browser wallet: the dialog shows the pairing URI as a QR code and a link; Cancel returns to the page", async ({
    page,
  }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const errors: string[] = [];
    const blocked: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const relay = await standInRelay(page);
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    const response = await page.goto(authorizeUrl(app, { client_id: client.id }, instance.url));
    const csp = response!.headers()["content-security-policy"];
    expect(csp).toContain("connect-src 'self' wss://relay.walletconnect.org wss://relay.walletconnect.com;");
    expect(csp).toContain("frame-src https://verify.walletconnect.org https://verify.walletconnect.com;");
    // Nothing of WalletConnect is loaded, and no socket opened, before the person picks it.
    await page.waitForLoadState("networkidle");
    expect(relay.url).toBe("");

    const button = page.getByRole("button", { name: "Continue with a wallet" });
    const hits = app.hits.length;
    await button.click();
    const chooser = page.getByRole("group", { name: "Choose a wallet" });
    await expect(chooser.getByRole("button")).toHaveText(["Browser wallet", /^WalletConnect/]);
    await expectNoAxeViolations(page, "the login page's list of wallets, WalletConnect among them");
    await chooser.getByRole("button", { name: /WalletConnect/ }).click();

    const dialog = page.getByRole("dialog", { name: "Connect a phone wallet" });
    await expect(dialog).toBeVisible();
    const link = dialog.getByTestId("walletconnect-link");
    await expect(link).toHaveAttribute("href", /^wc:[0-9a-f]{64}@2\?/, { timeout: 30_000 });
    const uri = (await link.getAttribute("href"))!;
    expect(new URLSearchParams(uri.split("?")[1]).get("relay-protocol")).toBe("irn");
    expect(relay.url).toMatch(/^wss:\/\/relay\.walletconnect\.(org|com)\/?\?/);
    expect(new URL(relay.url).searchParams.get("projectId")).toBe("0123456789abcdef0123456789abcdef");
    expect(relay.methods.some((m) => /subscribe|publish|proposeSession/i.test(m))).toBe(true);
    // The QR code is that URI: the path drawn is the encoder's for it.
    const qr = dialog.getByRole("img", { name: "QR code to connect a phone wallet with WalletConnect" });
    await expect(qr.locator("path")).toHaveAttribute("d", qrPath(encodeQr(uri, "M")));
    await expect(dialog.getByText("Waiting for your wallet to approve the connection…")).toBeVisible();
    await expectNoAxeViolations(page, "the WalletConnect dialog");

    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    await expect(button).toBeFocused();
    await expect(page.getByTestId("wallet-problem")).toHaveCount(0);
    expect(app.hits.length).toBe(hits);

    // Back on the page, the browser wallet still signs in.
    await button.click();
    await chooser.getByRole("button", { name: "Browser wallet" }).click();
    await backAtApplication(page, app);
    expect(wallet.requests).toContain("personal_sign");
    expect(errors).toEqual([]);
    // The page needs nothing beyond the relay and the Verify frame: nothing was blocked by the CSP.
    // (The Verify frame itself cannot load here: no network, so the relay stand-in gets no attestation.)
    expect(blocked).toEqual([]);
  });

  test("on a phone, the dialog leads with a link that opens the wallet app (the wc: URI)", async ({ browser }) => {
    const client = await registerClient(store, app, "Acme Fleet");
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await standInRelay(page);
    await page.goto(authorizeUrl(app, { client_id: client.id }, instance.url));
    // No browser wallet on the phone: WalletConnect is the one option, and the hint says so.
    await expect(page.getByTestId("no-wallet-hint")).toContainText("You can use a wallet on your phone.");
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const dialog = page.getByRole("dialog", { name: "Connect a phone wallet" });
    const link = dialog.getByRole("link", { name: "Open your wallet app" });
    await expect(link).toHaveAttribute("href", /^wc:/, { timeout: 30_000 });
    const [linkBox, qrBox] = [await link.boundingBox(), await dialog.getByTestId("walletconnect-qr").boundingBox()];
    expect(linkBox!.y).toBeLessThan(qrBox!.y);
    await expectNoAxeViolations(page, "the WalletConnect dialog on a phone");
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
    await context.close();
  });
});
