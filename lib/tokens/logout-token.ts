import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { SigningAlg } from "../keys/keystore";
import type { TokenSigner } from "./issue";
import { encodeSubject, type Subject } from "./sub";

/** The JOSE `typ` of logout tokens (Back-Channel Logout 1.0 2.4). */
export const LOGOUT_TOKEN_TYPE = "logout+jwt";
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** A logout token's lifetime: it is signed just before it is sent, so a short one suffices. */
export const LOGOUT_TOKEN_TTL = 120;

/**
 * A logout token (Back-Channel Logout 1.0 2.4), signed with the client's ID tokens' alg and key:
 * the subject and the session (`sid`) that ended, for one client. Never a nonce.
 */
export async function signLogoutToken(
  signer: TokenSigner,
  issuer: string,
  logout: { clientId: string; subject: Subject; sid: string; signingAlg?: SigningAlg },
  now: Date,
): Promise<string> {
  const { kid, alg, privateKey } = await signer.signingKey(logout.signingAlg);
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({
    iss: issuer,
    aud: logout.clientId,
    iat,
    exp: iat + LOGOUT_TOKEN_TTL,
    jti: randomUUID(),
    sub: encodeSubject(logout.subject),
    sid: logout.sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  })
    .setProtectedHeader({ alg, kid, typ: LOGOUT_TOKEN_TYPE })
    .sign(privateKey);
}
