import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { log, servedRequest } from "../log";
import { requestDuration, requests } from "../metrics";
import type { OAuthError } from "../oauth/errors";
import { limitAdminSignIn, limitProtocolRequest } from "../rate-limit";
import { describe, toOAuthError } from "./respond";

/**
 * What every endpoint does around its answer, wherever it is served (the protocol routes by
 * Keyfob's server, the page routes by Next.js): its rate limit, and one request's metrics and log
 * lines (its endpoint's name is the access line's route).
 */

/** Which budget an endpoint's requests count against: `protocol` (per client when it authenticates with its secret, else per address, one budget across endpoints), `admin_signin` (RATE_LIMIT_ADMIN_SIGNIN), or none. */
export type Limit = "protocol" | "admin_signin" | false;

/** Counts a request against its endpoint's budget (`authenticatedClient`: a client that authenticated with its secret). */
export function countRequest(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  limit: Limit,
  caller: Caller,
  authenticatedClient?: string,
): Promise<void> {
  if (limit === "admin_signin") return limitAdminSignIn(k, caller.ip);
  if (limit === "protocol") return limitProtocolRequest(k, caller.endpoint, { ip: caller.ip, authenticatedClient });
  return Promise.resolve();
}

/** One request's outcome, for the metrics and the log: a line per refusal or failure, never the parameters' values. */
export function serving(name: string) {
  const started = performance.now();
  const served = servedRequest();
  if (served) served.route = name;
  let outcome = "success";
  const ms = () => Math.round(performance.now() - started);
  const refused = (code: string, status: number) => {
    outcome = code;
    if (served) served.error = code;
    log.info("request refused", { endpoint: name, status, error: code, ms: ms() });
  };
  return {
    refused,
    /** The failure as the client sees it (toOAuthError), logged as a refusal or, at 500 and above, a failure. */
    failed(caught: unknown): OAuthError {
      const error = toOAuthError(caught);
      if (error.status >= 500) {
        outcome = error.code;
        if (served) served.error = error.code;
        log.error("request failed", { endpoint: name, status: error.status, error: error.code, ms: ms(), cause: describe(caught) });
      } else refused(error.code, error.status);
      return error;
    },
    done() {
      requests.inc({ endpoint: name, outcome });
      requestDuration.observe({ endpoint: name }, (performance.now() - started) / 1000);
    },
  };
}
