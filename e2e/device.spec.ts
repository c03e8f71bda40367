/**
 * The device authorization grant (RFC 8628) walked end to end in Chromium on a phone-sized page:
 * a device (this test, over HTTP) asks for a device code; on the phone the user opens the
 * verification_uri_complete (its QR code), sees the application's name, logo and the code, when and
 * from where the device asked, confirms that it is on their screen, and signs in with a browser
 * wallet on the hosted login; the device's next poll of /token gets tokens for the wallet. "No, it is
 * not on my screen" gives access_denied. The same link followed from another site's page asks for
 * the code to be typed instead. Guessed user codes are limited, per address and overall, by two
 * running servers together, and a right code from another address still gets through.
 */
import http from "node:http";
import { expect, test } from "@playwright/test";
import { jwtVerify, createRemoteJWKSet } from "jose";
import { generatePrivateKey } from "viem/accounts";
import { updateClient } from "../lib/clients/registry";
import { baseURL } from "../playwright.config";
import { secondInstance } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { CHAIN_ID, hostedLoginSetup, registerClient } from "./support/hosted-login";
import { installWallet } from "./support/wallet";

const { store, app } = hostedLoginSetup();
const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="56"><rect width="56" height="56" fill="#0ea5e9"/></svg>';

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

const form = (body: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(body),
});

/** What a TV's browser engine says it is. */
const TV = "Mozilla/5.0 (Linux; Android 12; BRAVIA 4K UR3) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

async function deviceClient(name: string) {
  const client = await registerClient(store, app, name, { logoUrl: "https://car.example.com/logo.png" });
  await updateClient(store, client.id, { deviceFlow: true });
  const request = form({ client_id: client.id, scope: "openid email" });
  const response = await fetch(`${baseURL}/device/authorization`, { ...request, headers: { ...request.headers, "user-agent": TV } });
  expect(response.status).toBe(200);
  return { client, started: (await response.json()) as Record<string, string> };
}

const poll = async (clientId: string, deviceCode: string) => {
  const response = await fetch(
    `${baseURL}/token`,
    form({ client_id: clientId, grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode }),
  );
  return (await response.json()) as Record<string, string>;
};

test.describe("device flow", () => {
  test("a car screen signs a user in with a wallet on a phone", async ({ page }) => {
    await page.route("https://car.example.com/logo.png", (route) => route.fulfill({ contentType: "image/svg+xml", body: LOGO }));
    const { client, started } = await deviceClient("Acme Car");
    expect((await poll(client.id, started.device_code)).error).toBe("authorization_pending");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });

    await page.goto(started.verification_uri_complete);
    await expect(page.getByRole("heading", { name: "Is this code on your screen?" })).toBeVisible();
    await expect(page.getByText("Acme Car", { exact: false }).first()).toBeVisible();
    await expect(page.getByTestId("user-code")).toHaveText(started.user_code);
    await expect(page.locator('img[src="https://car.example.com/logo.png"]')).toBeVisible();
    await expect(page.getByTestId("device-request")).toHaveText(
      /^Requested (now|\d+ seconds? ago) from IP address (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1), by Chrome 120 on Android\.$/,
    );
    await expectNoAxeViolations(page, "the device confirmation page");
    await page.getByRole("button", { name: "Yes, continue to sign in" }).click();

    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expect(page.getByTestId("disclosure")).toContainText("on your device");
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await expect(page.getByRole("heading", { name: "Your device is signed in" })).toBeVisible();
    expect(wallet.requests).toEqual(expect.arrayContaining(["eth_requestAccounts", "personal_sign"]));

    const tokens = await poll(client.id, started.device_code);
    const { payload } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(`${baseURL}/keys`)), {
      issuer: baseURL,
      audience: client.id,
    });
    expect(payload).toMatchObject({ provider_id: "web3", ethereum_address: wallet.address });
    // The code worked once.
    await page.goto(`/device?user_code=${started.user_code}`);
    await expect(page.getByTestId("device-problem")).toBeVisible();
  });

  test("a code typed by hand and answered No refuses the device", async ({ page }) => {
    const { client, started } = await deviceClient("Acme TV");
    await page.goto("/device");
    await expect(page.getByRole("heading", { name: "Connect a device" })).toBeVisible();
    await page.getByLabel("Code").fill(started.user_code.replace("-", "").toLowerCase());
    await page.getByRole("button", { name: "Continue" }).click();
    await expect(page.getByTestId("user-code")).toHaveText(started.user_code);
    await page.getByRole("button", { name: "No, it is not on my screen" }).click();
    await expect(page.getByRole("heading", { name: "Your device was not signed in" })).toBeVisible();
    expect((await poll(client.id, started.device_code)).error).toBe("access_denied");
  });

  test("a code in a link on another site is not shown to confirm: the person types the code on their device", async ({ page }) => {
    const { client, started } = await deviceClient("Acme Stick");
    // Someone's page (another site), with the device's link as a phishing mail or chat would carry it.
    await page.route("http://prize.example/", (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><title>Claim your prize</title><a href="${started.verification_uri_complete}">Claim your prize</a>`,
      }),
    );
    await page.goto("http://prize.example/");
    await page.getByRole("link", { name: "Claim your prize" }).click();
    await expect(page.getByRole("heading", { name: "Connect a device" })).toBeVisible();
    await expect(page.getByTestId("device-type-code")).toContainText("type it here yourself");
    await expect(page.getByLabel("Code")).toHaveValue("");
    await expect(page.getByTestId("user-code")).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Yes, continue to sign in" })).toHaveCount(0);
    await expectNoAxeViolations(page, "the device page opened from another site");
    expect((await poll(client.id, started.device_code)).error).toBe("authorization_pending");
    // Typed by the person, on Keyfob's own form: the code is shown to confirm.
    await page.getByLabel("Code").fill(started.user_code);
    await page.getByRole("button", { name: "Continue" }).click();
    await expect(page.getByTestId("user-code")).toHaveText(started.user_code);
    await expect(page.getByTestId("device-request")).toContainText("by Chrome 120 on Android");
  });

  /** A code entered on /device of `server` from a loopback address (127.0.0.1 unless given), as the page answers it. */
  const enter = (server: string, code: string, from = "127.0.0.1") =>
    new Promise<string>((resolve, reject) => {
      const url = `${server.replace("localhost", "127.0.0.1")}/device?user_code=${code}`;
      http
        .get(url, { localAddress: from }, (response) => {
          let page = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => (page += chunk));
          response.on("end", () =>
            resolve(
              page.includes("Too many codes were tried")
                ? "too_many"
                : page.includes("This code is unknown")
                  ? "unknown"
                  : page.includes("Is this code on your screen?")
                    ? "found"
                    : page,
            ),
          );
        })
        .on("error", reject);
    });
  const guess = (server: string, from?: string) => enter(server, "BCDF-GHJK", from);

  test("guessed user codes are limited per address across two server instances", async () => {
    test.setTimeout(180_000);
    // A second server on the same database.
    const second = await secondInstance();
    try {
      const servers = [baseURL, second.url];
      // Alternating, each server gets 6 of 12 guesses: under RATE_LIMIT_USER_CODE_PER_IP (10/1m) if
      // each counted alone, over it counted together (other tests' guesses only come sooner).
      const answers: { server: number; answer: string }[] = [];
      for (let i = 0; i < 12; i++) answers.push({ server: i % 2, answer: await guess(servers[i % 2]) });
      expect(answers.map((a) => a.answer).every((answer) => answer === "unknown" || answer === "too_many")).toBe(true);
      expect(answers.slice(0, 2).map((a) => a.answer)).toEqual(["unknown", "unknown"]);
      expect(answers.filter((a) => a.server === 1 && a.answer === "too_many").length).toBeGreaterThan(0);
      expect(answers.at(-1)?.answer).toBe("too_many");
    } finally {
      await second.stop();
    }
  });

  test("guessed user codes are limited overall across two server instances, never a right code from another address", async () => {
    test.setTimeout(180_000);
    // Two more servers, with a small budget of wrong codes from everyone and none per address.
    const env = () => ({ RATE_LIMIT_USER_CODE_PER_IP: "off", RATE_LIMIT_USER_CODE_TOTAL: "5/1m" });
    const servers = await Promise.all([secondInstance(env), secondInstance(env)]);
    try {
      // Six addresses guess once, three on each server: within 5/1m if each server counted alone,
      // over it counted together (and still over it should a minute begin meanwhile).
      const attackers = Array.from({ length: 6 }, (_, i) => `127.0.0.${10 + i}`);
      for (const [i, from] of attackers.entries()) expect(await guess(servers[i % 2].url, from)).toBe("unknown");
      // An address that guessed wrong may not guess again, on either server,
      for (const [i, from] of attackers.entries()) expect(await guess(servers[(i + 1) % 2].url, from)).toBe("too_many");
      // and a person entering their device's code from their own address is let through.
      const { started } = await deviceClient("Acme Radio");
      expect(await enter(servers[1].url, started.user_code, "127.0.0.2")).toBe("found");
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });
});
