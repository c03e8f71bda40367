import { z } from "zod";
import type { Keyfob } from "../keyfob";
import { checkDPoPProof } from "../oauth/dpop";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { readBodyText } from "../oauth/params";
import type { ProtocolRequest } from "../http/request";
import type { Issued } from "../tokens/issue";
import { presentedToken, verifyPresentedToken } from "../tokens/verify";
import { vehicleOf, vehicleDid } from "../vehicles/asset";
import { exchangeForVehicleToken, privilegesOfIds, privilegesOfPermissions } from "../vehicles/exchange";

/** Where the platform's SDKs ask for vehicle tokens, under the token exchange URL they are given. */
export const VEHICLE_TOKEN_EXCHANGE_PATH = "/v1/tokens/exchange";

/**
 * The platform's request, in either of its shapes: the legacy one the published SDK sends
 * (`nftContractAddress`, `tokenId`, `privileges` by id) or the asset DID with `permissions` by name.
 */
const platformRequest = z
  .object({
    nftContractAddress: z.string().max(64).optional(),
    tokenId: z.union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().max(80)]).optional(),
    privileges: z.array(z.unknown()).max(64).optional(),
    asset: z.string().max(256).optional(),
    permissions: z.array(z.string().max(128)).max(64).optional(),
    audience: z.array(z.string().min(1).max(256)).max(16).optional(),
    cloudEvents: z.unknown().optional(),
  })
  // Other fields are ignored, as the platform's service ignores them.
  .strip();

/**
 * `POST /v1/tokens/exchange`: the platform's token-exchange endpoint, so that its SDKs pointed at
 * Keyfob get vehicle tokens with no change. The developer token comes as `Authorization: Bearer`
 * (or `DPoP` with a proof, RFC 9449 7), the vehicle and privileges in a JSON body, and the answer is
 * `{"token": "<JWT>"}`; errors are the platform's `{"code": <status>, "message": "..."}` (the
 * route's `platformErrors`). The decision and the token are the RFC 8693 grant's (lib/vehicles/exchange.ts).
 */
export async function vehicleTokenExchange(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys" | "clients" | "vehicleKeys" | "vehicleAccess">,
  request: ProtocolRequest,
): Promise<Issued<{ token: string }>> {
  const subject = await verifyPresentedToken(
    keyfob,
    request.http,
    presentedToken(request.http),
    `${keyfob.config.issuerUrl}${VEHICLE_TOKEN_EXCHANGE_PATH}`,
  );
  const body = await readPlatformRequest(request);
  const jkt = subject.payload.cnf?.jkt;
  // A bound developer token was presented with a proof of its key; an unbound one may bring a proof to bind the vehicle token.
  const proof =
    jkt !== undefined ? { jkt } : await checkDPoPProof(keyfob, request.http, `${keyfob.config.issuerUrl}${VEHICLE_TOKEN_EXCHANGE_PATH}`);
  const asset = body.asset !== undefined;
  const resource = asset ? body.asset! : legacyVehicle(keyfob.config.chainId, body);
  const privileges = asset ? privilegesOfPermissions(body.permissions ?? []) : privilegesOfIds(body.privileges ?? []);
  const issued = await exchangeForVehicleToken(keyfob, {
    clientId: subject.clientId,
    subject,
    resource,
    privileges,
    audience: body.audience,
    proof,
    caller: request.caller,
  });
  return { response: { token: issued.token }, flow: "token_exchange", connector: String(subject.payload.provider_id ?? "unknown") };
}

async function readPlatformRequest(request: ProtocolRequest): Promise<z.infer<typeof platformRequest>> {
  const type = request.http.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== "application/json") throw invalidRequest("the request body must be JSON (Content-Type: application/json)");
  let json: unknown;
  try {
    json = JSON.parse(await readBodyText(request.http));
  } catch (error) {
    if (error instanceof SyntaxError) throw invalidRequest("the request body is not valid JSON");
    throw error;
  }
  const parsed = platformRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidRequest(`invalid request body: ${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  if (parsed.data.cloudEvents !== undefined) throw invalidRequest("cloudEvents agreements are not supported here: ask for privileges");
  return parsed.data;
}

/** The legacy shape's vehicle, on the configured chain, as a DID. */
function legacyVehicle(chainId: number, body: z.infer<typeof platformRequest>): string {
  if (body.nftContractAddress === undefined || body.tokenId === undefined)
    throw invalidRequest("name the vehicle: asset (its DID), or nftContractAddress and tokenId");
  const vehicle = vehicleOf(chainId, body.nftContractAddress, body.tokenId);
  if (!vehicle) throw new OAuthError("invalid_target", "nftContractAddress must be a 0x address and tokenId a token id");
  return vehicleDid(vehicle);
}
