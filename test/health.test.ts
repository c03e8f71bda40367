/** Readiness (/healthz/ready) on a real database, an unreachable one, and while shutting down. */
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "@/lib/config";
import { createStore } from "@/lib/store";
import { readiness } from "@/lib/health";
import { createKeyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { route } from "./support/routes";

const live = route("/healthz/live");
const ready = route("/healthz/ready");

const unreachable = "postgresql://keyfob:keyfob@localhost:1/keyfob";
const down = createKeyfob({ ...loadConfig(), databaseUrl: unreachable, recoveryThreads: 0 }, createStore(unreachable, 1));
afterAll(() => down.close());

it("is ready with the database reachable and a signing key loaded", async () => {
  const response = await ready(new Request("http://localhost/healthz/ready"));
  expect(response.status).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(await response.json()).toEqual({ status: "ok", checks: { database: "ok", signing_keys: "ok", shutting_down: false } });
  expect((await live(new Request("http://localhost/healthz/live"))).status).toBe(200);
});

it("is not ready when the database cannot be reached, or while shutting down", async () => {
  expect(await readiness(down, false)).toEqual({
    ready: false,
    checks: { database: "failed", signing_keys: "failed", shutting_down: false },
  });
  expect(await readiness(keyfob(), true)).toEqual({ ready: false, checks: { database: "ok", signing_keys: "ok", shutting_down: true } });
});
