import { randomUUID } from "node:crypto";
import { createPublicClient, fallback, getAddress, type Address, type PublicClient } from "viem";
import type { AuditLog } from "../audit";
import { rpcChain } from "../chain";
import type { Clock } from "../clock";
import type { Config } from "../config";
import { log } from "../log";
import type { Store } from "../store";
import { VEHICLE_ABI, type VehicleAccessPolicy } from "./access";
import { vehicleDid, vehicleOf, type Vehicle } from "./asset";
import { isPrivilegeId } from "./privileges";
import { tracedHttp } from "../tracing";

/** The cursor's name in chain_cursors. */
const CURSOR = "vehicle_events";
/** Blocks read per getLogs call at most: providers cap the range (commonly 2,000 to 10,000). */
const MAX_RANGE = 2_000n;

type Needs = {
  config: Pick<Config, "chainId" | "rpcUrls" | "vehicleContracts" | "vehicleEventsInterval">;
  store: Store;
  clock: Clock;
  audit: AuditLog;
  access: VehicleAccessPolicy;
};

/**
 * Ends vehicle tokens when the chain takes their grant away: reads the vehicle contracts'
 * `Transfer` and `PrivilegeSet` events every VEHICLE_EVENTS_INTERVAL, from the block after the last
 * one processed (kept in chain_cursors, so a restart or an RPC outage resumes there), and
 *
 * - on a transfer, revokes the vehicle's tokens decided on an earlier block (the new owner's
 *   version of the token carries none of the old privileges);
 * - on a privilege set, asks the access policy whether the grantee still holds it, and if not
 *   revokes its tokens of that vehicle and privilege decided on an earlier block.
 *
 * One instance watches at a time: the cursor is leased (three intervals, renewed every pass), and
 * another instance takes over when it lapses. Revocation is a database change, so every instance
 * refuses the tokens at once. The events are read from the first RPC_URL provider that answers:
 * a provider that hides an event delays a revocation by at most a token's lifetime
 * (VEHICLE_TOKEN_TTL); issuing is decided by the quorum.
 */
export class VehicleEventWatcher {
  private readonly holder = randomUUID();
  private readonly client: PublicClient;
  private readonly contracts: Address[];
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private closed = false;

  constructor(private readonly needs: Needs) {
    const { rpcUrls, chainId, vehicleContracts } = needs.config;
    this.client = createPublicClient({
      chain: rpcChain(chainId, rpcUrls),
      transport: fallback(rpcUrls.map((url) => tracedHttp(url, { timeout: 5_000, retryCount: 1 }))),
    });
    this.contracts = vehicleContracts as Address[];
  }

  /** Watches until closed. */
  start(): void {
    const every = this.needs.config.vehicleEventsInterval * 1000;
    const next = () => {
      if (this.closed) return;
      this.timer = setTimeout(() => {
        this.running = this.pass()
          .catch((error) => log.warn("reading the vehicle contracts' events failed; trying again", { error: String(error) }))
          .finally(next);
      }, every);
      this.timer.unref();
    };
    next();
  }

  /**
   * One pass: takes the lease, reads the events since the cursor up to the chain's head (in ranges
   * of MAX_RANGE blocks), revokes what they end and moves the cursor. False when another instance
   * holds the lease. Throws when the chain or the database cannot be reached (the next pass retries).
   */
  async pass(): Promise<boolean> {
    const { store, clock, config } = this.needs;
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    const lease = (now: Date) => new Date(now.getTime() + 3 * config.vehicleEventsInterval * 1000);
    let now = clock.now();
    const leased = await store.chainCursors.lease(CURSOR, this.holder, head, lease(now), now);
    if (leased === undefined) return false;
    let cursor: bigint = leased;
    while (cursor < head && !this.closed) {
      const toBlock: bigint = cursor + MAX_RANGE < head ? cursor + MAX_RANGE : head;
      const events = await this.client.getContractEvents({
        address: this.contracts,
        abi: VEHICLE_ABI,
        fromBlock: cursor + 1n,
        toBlock,
        strict: true,
      });
      for (const event of events) await this.apply(event);
      now = clock.now();
      if (!(await store.chainCursors.advance(CURSOR, this.holder, toBlock))) return false;
      cursor = toBlock;
      if (cursor < head && (await store.chainCursors.lease(CURSOR, this.holder, head, lease(now), now)) === undefined) return false;
    }
    return true;
  }

  /** Stops watching and gives the lease up, so another instance takes over at once. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    await this.needs.store.chainCursors.release(CURSOR, this.holder).catch(() => undefined);
  }

  private async apply(event: VehicleEvent): Promise<void> {
    const { store, clock, access, config } = this.needs;
    const vehicle = vehicleOf(config.chainId, event.address, event.args.tokenId.toString());
    if (!vehicle || event.blockNumber === null) return;
    const block = event.blockNumber;
    if (event.eventName === "Transfer") {
      const revoked = await store.tokens.revokeVehicleTokens({ vehicle: vehicleDid(vehicle), block }, clock.now());
      if (revoked > 0) this.audited(vehicle, `transferred in block ${block}: ${revoked} vehicle tokens revoked`);
      return;
    }
    const { privId, user } = event.args;
    const privilege = Number(privId);
    if (!isPrivilegeId(privilege)) return;
    const grantee = getAddress(user);
    const { granted } = await access.decide(vehicle, grantee, [privilege]);
    if (granted.includes(privilege)) return;
    const revoked = await store.tokens.revokeVehicleTokens(
      { vehicle: vehicleDid(vehicle), block, clientId: grantee, privilege },
      clock.now(),
    );
    if (revoked > 0)
      this.audited(vehicle, `privilege ${privilege} of ${grantee} ended in block ${block}: ${revoked} vehicle tokens revoked`, grantee);
  }

  private audited(vehicle: Vehicle, detail: string, clientId?: string) {
    this.needs.audit.record({ action: "vehicle_tokens.revoked", outcome: "success", clientId, detail: `${vehicleDid(vehicle)} ${detail}` });
  }
}

/** What a pass reads of the events (viem's decoded logs). */
type VehicleEvent = { address: Address; blockNumber: bigint | null } & (
  | { eventName: "Transfer"; args: { tokenId: bigint } }
  | { eventName: "PrivilegeSet"; args: { tokenId: bigint; privId: bigint; user: Address } }
);
