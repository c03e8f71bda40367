/**
 * The names of the privileges a vehicle token carries (their ids on chain), as the admin lists show
 * them. The protocol's own table is lib/vehicles/privileges.ts (PRIVILEGES); this lookup is the one
 * place the admin surface names them, to be pointed at that table.
 */
const NAMES: Readonly<Record<number, string>> = {
  1: "GetNonLocationHistory",
  2: "ExecuteCommands",
  3: "GetCurrentLocation",
  4: "GetLocationHistory",
  5: "GetVINCredential",
  6: "GetLiveData",
  7: "GetRawData",
  8: "GetApproximateLocation",
};

export type VehiclePrivilege = { id: number; name: string };

/** A privilege id with its name; an id this table does not know is named by its number, never dropped. */
export const vehiclePrivilege = (id: number): VehiclePrivilege => ({ id, name: NAMES[id] ?? `privilege ${id}` });
