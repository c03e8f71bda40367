/**
 * The platform's vehicle privileges: the ids its vehicle contract grants on chain (`setPrivilege`,
 * `hasPrivilege`) and the names its tokens and APIs use ("privilege:<Name>"), as the platform's
 * token-exchange service defines them (pkg/tokenclaims/permissions.go).
 */
export const PRIVILEGES = {
  1: "GetNonLocationHistory",
  2: "ExecuteCommands",
  3: "GetCurrentLocation",
  4: "GetLocationHistory",
  5: "GetVINCredential",
  6: "GetLiveData",
  7: "GetRawData",
  8: "GetApproximateLocation",
} as const satisfies Record<number, string>;

export type PrivilegeId = keyof typeof PRIVILEGES;

/** The prefix of a privilege's name as a permission (a vehicle token's `permissions`, the grant's `scope`). */
const PERMISSION_PREFIX = "privilege:";

/** A privilege's permission name: "privilege:GetNonLocationHistory". */
export const permissionName = (id: PrivilegeId): string => `${PERMISSION_PREFIX}${PRIVILEGES[id]}`;

const BY_NAME = new Map<string, PrivilegeId>(
  Object.entries(PRIVILEGES).map(([id, name]) => [`${PERMISSION_PREFIX}${name}`, Number(id) as PrivilegeId] as const),
);

/** The privilege a permission name means, or undefined for a name the platform does not define. */
export const privilegeOfPermission = (name: string): PrivilegeId | undefined => BY_NAME.get(name);

/** Whether a number is a privilege id the platform defines. */
export const isPrivilegeId = (id: unknown): id is PrivilegeId => typeof id === "number" && Object.hasOwn(PRIVILEGES, id);

/** A privilege with its name, as the dashboard and the management API list a vehicle token's. */
export type VehiclePrivilege = { id: number; name: string };

/** A privilege id with its name; an id the platform does not define is named by its number, never dropped. */
export const vehiclePrivilege = (id: number): VehiclePrivilege => ({ id, name: isPrivilegeId(id) ? PRIVILEGES[id] : `privilege ${id}` });
