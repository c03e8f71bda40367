/**
 * The back-channel logout retry schedule comes from the configuration (BACKCHANNEL_LOGOUT_RETRY_*):
 * an instance delivering to an RP that never answers waits the first delay, doubles it up to the
 * maximum, and gives the token up, audited, once the give-up age after the logout has passed. The
 * passes run on a clock of the test's (deliverDue's), against real PostgreSQL and a real closed port.
 */
import { afterAll, expect, it } from "vitest";
import { updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { createKeyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { endSession } from "@/lib/sessions/login-session";
import { freePort } from "../scripts/free-port";
import { LOOPBACK_NETWORKS, sessionWith } from "./support/backchannel";
import { tables } from "./support/database";
import { registerApp } from "./support/flow-b";

const retrying = createKeyfob(
  loadConfig({
    ...process.env,
    BACKCHANNEL_LOGOUT_RETRY_FIRST: "3s",
    BACKCHANNEL_LOGOUT_RETRY_MAX: "10s",
    BACKCHANNEL_LOGOUT_RETRY_FOR: "30s",
    BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
  }),
  keyfob().store,
);
afterAll(() => retrying.close());

it("waits BACKCHANNEL_LOGOUT_RETRY_FIRST, doubles up to _MAX, and gives up after _FOR", async () => {
  const app = await registerApp();
  // Nothing listens there: every attempt fails at once (ECONNREFUSED), and is tried again.
  await updateClient(
    keyfob().store,
    app.clientId,
    { backchannelLogoutUri: `http://localhost:${await freePort()}/logout` },
    retrying.config,
  );
  const ended = await sessionWith([app]);
  expect(await endSession(keyfob(), ended.token)).toBe(true);
  const row = () => tables(keyfob()).backchannelLogout.findFirst({ where: { clientId: app.clientId } });
  const loggedOutAt = (await row())!.createdAt.getTime();

  // Each pass runs at the row's next attempt: the waits after attempts 1-4 are 3 s, 6 s, 10 s (the maximum), 10 s.
  let at = loggedOutAt;
  const waits = [];
  for (let attempt = 1; attempt <= 4; attempt++) {
    await retrying.logouts.deliverDue(() => new Date(at));
    const next = (await row())!;
    expect(next).toMatchObject({ attempts: attempt, lastError: expect.stringMatching(/unreachable/) });
    waits.push((next.nextAttemptAt.getTime() - at) / 1000);
    at = next.nextAttemptAt.getTime();
  }
  expect(waits).toEqual([3, 6, 10, 10]);

  // At 29 s after the logout, the next attempt would be past 30 s: the token is given up, audited.
  await retrying.logouts.deliverDue(() => new Date(at));
  expect(await row()).toBeNull();
  await retrying.audit.flush();
  const audit = await tables(keyfob()).auditEvent.findMany({ where: { action: "logout.backchannel", clientId: app.clientId } });
  expect(audit).toMatchObject([{ outcome: "delivery_failed", detail: expect.stringMatching(/^given up after 5 attempts: unreachable/) }]);
});
