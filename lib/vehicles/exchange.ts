import { isAddress, type Address } from "viem";
import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import type { DPoPProof } from "../oauth/dpop";
import { invalidGrant, OAuthError } from "../oauth/errors";
import type { ActiveToken } from "../tokens/verify";
import { parseVehicleDid, vehicleDid, type Vehicle } from "./asset";
import { isPrivilegeId, permissionName, privilegeOfPermission, type PrivilegeId } from "./privileges";
import { signVehicleToken } from "./token";

/** A vehicle token request, as both framings (RFC 8693 at /token, the platform's /v1/tokens/exchange) give it. */
export type VehicleTokenRequest = {
  /** The client asking: the one authenticated at /token, or the subject token's at the platform's endpoint. */
  clientId: string;
  /** The access token exchanged, verified (signature, record, key). */
  subject: ActiveToken;
  /** The vehicle's DID as sent (RFC 8707's resource, the platform's asset). */
  resource: string;
  privileges: readonly PrivilegeId[];
  /** The token's `aud`; VEHICLE_TOKEN_AUDIENCE when none. */
  audience?: readonly string[];
  /** The request's DPoP proof: the vehicle token is bound to its key. */
  proof?: DPoPProof;
  caller: Caller;
};

export type VehicleTokenIssued = { token: string; expiresIn: number; permissions: string[]; bound: boolean };

type Needs = Pick<Keyfob, "config" | "clock" | "store" | "clients" | "vehicleKeys" | "vehicleAccess">;

const invalidTarget = (description: string) => new OAuthError("invalid_target", description);

/**
 * Exchanges a client's access token for a vehicle token: the client must be allowed token
 * exchange and be a developer license (its id its 0x address, the grantee the vehicle's owner
 * names on chain); the vehicle one of VEHICLE_CONTRACTS' on CHAIN_ID; every privilege asked held
 * by the license now, as the access policy reads it (the chain, per request, nothing cached). The
 * token is recorded with its audit event in one statement that checks the subject token, its
 * signer, its holder and the client again (lib/store), so a revocation on another instance a
 * moment ago refuses it.
 */
export async function exchangeForVehicleToken(keyfob: Needs, request: VehicleTokenRequest): Promise<VehicleTokenIssued> {
  const { config, clock, store } = keyfob;
  const { clientId, subject, proof } = request;
  refuseClient(await keyfob.clients.get(clientId));
  if (!isAddress(clientId, { strict: false }))
    throw new OAuthError("unauthorized_client", "vehicle tokens are for developer licenses: a client whose client_id is its 0x address");
  if (subject.clientId !== clientId) throw invalidGrant("the subject token was issued to another client");
  const jkt = subject.payload.cnf?.jkt;
  if (jkt !== undefined && proof?.jkt !== jkt)
    throw invalidGrant("the subject token is bound to a DPoP key: the request's DPoP proof must be signed by that key");

  const vehicle = acceptedVehicle(config, request.resource);
  const policy = keyfob.vehicleAccess;
  if (!policy) throw invalidTarget("no vehicle contracts are configured");
  if (request.privileges.length === 0) throw new OAuthError("invalid_scope", "name at least one privilege");
  const privileges = [...new Set(request.privileges)].sort((a, b) => a - b);
  const decision = await policy.decide(vehicle, clientId as Address, privileges);
  if (!decision.exists) throw invalidTarget(`no vehicle ${vehicleDid(vehicle)} exists`);
  const withheld = privileges.filter((id) => !decision.granted.includes(id));
  if (withheld.length > 0)
    throw new OAuthError(
      "invalid_scope",
      `the vehicle's owner has not granted this client ${withheld.map(permissionName).join(", ")} on ${vehicleDid(vehicle)}`,
    );

  const now = clock.now();
  const lifetime = config.vehicleTokenTtl;
  const signed = await signVehicleToken(keyfob.vehicleKeys, {
    issuer: config.vehicleTokenIssuer,
    clientId,
    vehicle,
    privileges,
    audience: request.audience?.length ? request.audience : config.vehicleTokenAudience,
    lifetime,
    now,
    jkt: proof?.jkt,
  });
  const permissions = privileges.map(permissionName);
  const recorded = await store.tokens.recordVehicleToken(
    clientId,
    {
      jti: signed.jti,
      subjectJti: subject.payload.jti,
      scope: permissions.join(" "),
      expiresAt: signed.expiresAt,
      vehicle: vehicleDid(vehicle),
      privileges,
      chainBlock: decision.block,
    },
    request.caller,
    now,
  );
  if (!recorded) {
    // The client may have changed since the cache read it: say so if it did.
    refuseClient(await store.clients.findForTokens(clientId));
    throw invalidGrant("the subject token is no longer valid: revoked or expired, or its signer or holder disabled");
  }
  return { token: signed.token, expiresIn: lifetime, permissions, bound: proof !== undefined };
}

/** Refuses a client that is unknown, disabled, or not allowed token exchange. */
function refuseClient(client: { enabled: boolean; tokenExchange: boolean } | undefined): void {
  if (!client?.enabled) throw new OAuthError("invalid_client", "unknown or disabled client");
  if (!client.tokenExchange)
    throw new OAuthError(
      "unauthorized_client",
      "this client is not allowed token exchange; an admin can allow it in the client's settings",
    );
}

/** The vehicle a resource names, if it is one of the configured contracts' on the configured chain; else invalid_target. */
function acceptedVehicle(config: Needs["config"], resource: string): Vehicle {
  const vehicle = parseVehicleDid(resource);
  if (!vehicle) throw invalidTarget("the resource must be a vehicle: did:erc721:<chain id>:<contract address>:<token id>");
  const contract = vehicle.contract.toLowerCase();
  const accepted =
    config.vehicleContracts.includes(contract) || (config.vehicleGrants ?? []).some((g) => g.vehicle.contract.toLowerCase() === contract);
  if (vehicle.chainId !== config.chainId || !accepted)
    throw invalidTarget(`vehicles of ${vehicle.contract} on chain ${vehicle.chainId} are not known here`);
  return vehicle;
}

/** The privileges permission names ask for ("privilege:GetNonLocationHistory"); an unknown name is invalid_scope. */
export function privilegesOfPermissions(names: readonly string[]): PrivilegeId[] {
  return names.map((name) => {
    const id = privilegeOfPermission(name);
    if (id === undefined) throw new OAuthError("invalid_scope", `unknown privilege: ${name.slice(0, 64)}`);
    return id;
  });
}

/** Privilege ids as the platform's legacy request sends them; an unknown one is invalid_scope. */
export function privilegesOfIds(ids: readonly unknown[]): PrivilegeId[] {
  return ids.map((id) => {
    if (!isPrivilegeId(id)) throw new OAuthError("invalid_scope", `unknown privilege id: ${String(id).slice(0, 32)}`);
    return id;
  });
}
