import pg from "pg";
import { describe, expect, it } from "vitest";
import { batched, byRequest } from "./batch";

/** A statement that doubles its inputs, recording the batches it ran; it answers when `release` is called. */
function doubling() {
  const batches: number[][] = [];
  const pending: (() => void)[] = [];
  const execute = (inputs: number[]) =>
    new Promise<number[]>((resolve) => {
      batches.push(inputs);
      pending.push(() => resolve(inputs.map((n) => n * 2)));
    });
  const release = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { batches, execute, release };
}

/** What PostgreSQL raises for a statement: a SQLSTATE on node-postgres's DatabaseError. */
function databaseError(code: string) {
  const error = new pg.DatabaseError("refused", 0, "error");
  error.code = code;
  return error;
}

/** One batch at a time, as Keyfob runs them, that no test here holds long enough to count as stalled. */
const ONE_AT_A_TIME = { inFlight: 1, maxSize: 64, stalledMs: 10_000 };

describe("batched statements (group commit)", () => {
  it("runs a lone call at once, and the calls that came meanwhile together, each with its own answer", async () => {
    const { batches, execute, release } = doubling();
    const run = batched("test", execute, ONE_AT_A_TIME);
    const answers = Promise.all([1, 2, 3, 4].map(run));
    expect(batches).toEqual([[1]]);
    await release();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(await answers).toEqual([2, 4, 6, 8]);
  });

  it("keeps `inFlight` batches running at most, of `maxSize` calls at most", async () => {
    const { batches, execute, release } = doubling();
    const run = batched("test", execute, { inFlight: 2, maxSize: 3, stalledMs: 10_000 });
    const answers = Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9].map(run));
    expect(batches).toEqual([[1], [2]]);
    await release();
    expect(batches).toEqual([[1], [2], [3, 4, 5], [6, 7, 8], [9]]);
    expect(await answers).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18]);
  });

  it("lets the calls behind a batch that has run for `stalledMs` go beside it, in one batch", async () => {
    const { batches, execute, release } = doubling();
    const run = batched("test", execute, { inFlight: 1, maxSize: 64, stalledMs: 20 });
    const answers = Promise.all([1, 2, 3].map(run));
    expect(batches).toEqual([[1]]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(batches).toEqual([[1], [2, 3]]);
    await release();
    expect(await answers).toEqual([2, 4, 6]);
  });

  it("runs each call of a batch the statement refused on its own, so that only the offending one fails", async () => {
    const batches: number[][] = [];
    const run = batched(
      "test",
      async (inputs: number[]) => {
        batches.push(inputs);
        if (inputs.includes(13)) throw databaseError("22021");
        return inputs.map((n) => n * 2);
      },
      ONE_AT_A_TIME,
    );
    const answers = await Promise.allSettled([1, 2, 13, 4].map(run));
    expect(batches).toEqual([[1], [2, 13, 4], [2], [13], [4]]);
    expect(answers.map((a) => (a.status === "fulfilled" ? a.value : (a.reason as pg.DatabaseError).code))).toEqual([2, 4, "22021", 8]);
  });

  it("fails every call of a batch at once when the connection or the server failed, without running them again", async () => {
    for (const error of [new Error("Connection terminated unexpectedly"), databaseError("57P01"), databaseError("08006")]) {
      const batches: number[][] = [];
      const run = batched(
        "test",
        async (inputs: number[]) => {
          batches.push(inputs);
          if (batches.length > 1) throw error;
          return inputs;
        },
        ONE_AT_A_TIME,
      );
      const answers = await Promise.allSettled([1, 2, 3].map(run));
      expect(batches).toEqual([[1], [2, 3]]);
      expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    }
  });

  it("goes on with the calls queued behind a batch that failed", async () => {
    let fail = true;
    const run = batched(
      "test",
      async (inputs: number[]) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (fail) {
          fail = false;
          throw new Error("Connection terminated unexpectedly");
        }
        return inputs;
      },
      ONE_AT_A_TIME,
    );
    const first = run(1);
    const later = Promise.all([2, 3].map(run));
    await expect(first).rejects.toThrow("Connection terminated");
    expect(await later).toEqual([2, 3]);
  });
});

describe("byRequest", () => {
  it("puts each returned row at its request's place (i, from 1), and `none` where a request returned none", () => {
    expect(
      byRequest(
        4,
        [
          { i: "3", v: "c" },
          { i: 1, v: "a" },
        ],
        undefined,
      ),
    ).toEqual([{ v: "a" }, undefined, { v: "c" }, undefined]);
  });
});
