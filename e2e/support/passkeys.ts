/**
 * Passkeys in real Chromium: a virtual WebAuthn authenticator through the DevTools protocol
 * (WebAuthn.enable, WebAuthn.addVirtualAuthenticator): a platform authenticator with resident keys
 * and user verification that answers at once, as a phone or laptop with a screen lock would.
 *
 * misbehave() wraps navigator.credentials.get in the page, so that a test can send Keyfob a
 * replayed assertion (the previous one again) or a tampered one (a flipped signature byte), through
 * the page's own code path.
 */
import type { CDPSession, Page } from "@playwright/test";

export type VirtualAuthenticator = {
  cdp: CDPSession;
  authenticatorId: string;
  credentials(): Promise<
    { credentialId: string; isResidentCredential: boolean; rpId?: string; userHandle?: string; signCount: number; privateKey: string }[]
  >;
};

export async function addVirtualAuthenticator(page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    cdp,
    authenticatorId,
    credentials: async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials,
  };
}

/** Copies the passkeys of one virtual authenticator into another (the same person on another page). */
export async function copyPasskeys(from: VirtualAuthenticator, to: VirtualAuthenticator) {
  for (const credential of await from.credentials())
    await to.cdp.send("WebAuthn.addCredential", { authenticatorId: to.authenticatorId, credential });
}

export type Misbehaviour = "none" | "replay" | "tamper";

/** Installs the navigator.credentials.get wrapper; returns a switch for what the next assertion does. */
export async function misbehave(page: Page): Promise<(mode: Misbehaviour) => Promise<void>> {
  await page.addInitScript(() => {
    const state = window as unknown as { __passkeyMode: string };
    state.__passkeyMode = "none";
    const b64 = (buffer: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buffer)));
    const bytes = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0)).buffer;
    type Recorded = {
      id: string;
      rawId: string;
      type: string;
      attachment: string | null;
      clientDataJSON: string;
      authenticatorData: string;
      signature: string;
      userHandle: string | null;
    };
    /** A credential-shaped object, as @simplewebauthn/browser reads one. */
    const fake = (r: Recorded) =>
      ({
        id: r.id,
        rawId: bytes(r.rawId),
        type: r.type,
        authenticatorAttachment: r.attachment,
        getClientExtensionResults: () => ({}),
        response: {
          clientDataJSON: bytes(r.clientDataJSON),
          authenticatorData: bytes(r.authenticatorData),
          signature: bytes(r.signature),
          userHandle: r.userHandle ? bytes(r.userHandle) : null,
        },
      }) as unknown as Credential;
    const real = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = async (options?: CredentialRequestOptions) => {
      // The last assertion is kept across pages (sessionStorage): a replay comes from an earlier login.
      const last = sessionStorage.getItem("__lastAssertion");
      if (state.__passkeyMode === "replay" && last) return fake(JSON.parse(last) as Recorded);
      const credential = (await real(options)) as PublicKeyCredential | null;
      if (!credential) return credential;
      const response = credential.response as AuthenticatorAssertionResponse;
      const recorded: Recorded = {
        id: credential.id,
        rawId: b64(credential.rawId),
        type: credential.type,
        attachment: credential.authenticatorAttachment,
        clientDataJSON: b64(response.clientDataJSON),
        authenticatorData: b64(response.authenticatorData),
        signature: b64(response.signature),
        userHandle: response.userHandle ? b64(response.userHandle) : null,
      };
      if (state.__passkeyMode === "tamper") {
        const signature = new Uint8Array(response.signature.slice(0));
        signature[signature.length - 3] ^= 0x01;
        return fake({ ...recorded, signature: b64(signature.buffer) });
      }
      sessionStorage.setItem("__lastAssertion", JSON.stringify(recorded));
      return fake(recorded);
    };
  });
  return async (mode) => {
    await page.evaluate((value) => ((window as unknown as { __passkeyMode: string }).__passkeyMode = value), mode);
  };
}
