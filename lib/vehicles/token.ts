import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { getAddress } from "viem";
import { ACCESS_TOKEN_TYPE, binding, type TokenSigner } from "../tokens/issue";
import { vehicleDid, type Vehicle } from "./asset";
import { permissionName, type PrivilegeId } from "./privileges";

/** What a vehicle token says: the vehicle, the privileges, who asked, for whom, and the DPoP key it is bound to. */
export type VehicleTokenClaims = {
  issuer: string;
  /** The client (a developer license: its 0x address). */
  clientId: string;
  vehicle: Vehicle;
  privileges: readonly PrivilegeId[];
  audience: readonly string[];
  lifetime: number;
  now: Date;
  jkt?: string;
};

/**
 * Signs a vehicle token with the vehicle key set (never the access tokens' keys, and under its own
 * issuer: neither kind passes for the other). Its claims are those the platform's consumers read
 * (its token-exchange service's pkg/tokenclaims): `sub` the license's checksummed address, `asset`
 * the vehicle's DID and `permissions` the privileges' names, and the legacy `contract_address`,
 * `token_id` (a string) and `privilege_ids`; besides, `act` (RFC 8693 4.1) names the client
 * acting, `client_id` and `jti` make it an RFC 9068 access token, and `cnf.jkt` binds it to a DPoP key.
 */
export async function signVehicleToken(
  signer: TokenSigner,
  claims: VehicleTokenClaims,
): Promise<{ token: string; jti: string; expiresAt: Date }> {
  const { kid, alg, privateKey } = await signer.signingKey();
  const iat = Math.floor(claims.now.getTime() / 1000);
  const exp = iat + claims.lifetime;
  const jti = randomUUID();
  const sub = getAddress(claims.clientId);
  const token = await new SignJWT({
    iss: claims.issuer,
    sub,
    aud: [...claims.audience],
    iat,
    exp,
    jti,
    client_id: claims.clientId,
    act: { sub },
    asset: vehicleDid(claims.vehicle),
    permissions: claims.privileges.map(permissionName),
    contract_address: claims.vehicle.contract.toLowerCase(),
    token_id: claims.vehicle.tokenId.toString(),
    privilege_ids: [...claims.privileges],
    ...binding(claims.jkt),
  })
    .setProtectedHeader({ alg, kid, typ: ACCESS_TOKEN_TYPE })
    .sign(privateKey);
  return { token, jti, expiresAt: new Date(exp * 1000) };
}
