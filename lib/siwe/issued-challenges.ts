import type { NewChallenge, SigningAlg } from "../store/contract";

/**
 * What an instance remembers of a Flow A challenge it issued: the stored challenge without its key
 * and caller, and the alg its client's tokens are signed with as it was when it was issued.
 */
export type IssuedChallenge = Omit<NewChallenge, "stateHash" | "ip"> & { signingAlg: SigningAlg };

/** At about 1 KB an entry, 2 MB at most: states older than the newest this many are read back from the database. */
const MAX_ENTRIES = 2048;

/**
 * The challenges this instance issued and that were not yet submitted here, by state hash. A
 * submission to the instance that issued its challenge takes the message from here instead of
 * reading it back: its statement then checks everything else (lib/store/challenges.ts
 * consume). This is only a shortcut: the challenge row stays the truth, every check runs
 * in the statement, and a submission elsewhere, or one the shortcut cannot accept, reads the row.
 * One statement: see docs/decisions/2026-11-24-flow-a-submission-in-one-statement.md
 */
export class IssuedChallenges {
  private readonly entries = new Map<string, IssuedChallenge>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  remember(stateHash: string, challenge: IssuedChallenge): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(stateHash, challenge);
  }

  /** The challenge of this state if this instance issued it and it has not expired at `now`; forgotten either way. */
  take(stateHash: string, now: Date): IssuedChallenge | undefined {
    const challenge = this.entries.get(stateHash);
    if (challenge === undefined) return undefined;
    this.entries.delete(stateHash);
    return challenge.expiresAt > now ? challenge : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
