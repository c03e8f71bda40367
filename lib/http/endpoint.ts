import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import type { OAuthError } from "../oauth/errors";
import { keyfob as runtimeKeyfob } from "../runtime";
import { clientIp } from "./client-ip";
import { errorResponse } from "./respond";
import { countRequest, serving, type Limit } from "./serving";

/**
 * The browser's endpoints that Next.js serves in app/ (the protocol endpoints are in
 * lib/http/routes.ts, served by Keyfob's server): the hosted login's redirects, logout, the
 * account's and the dashboard's sign-in steps, Auth.js, the dashboard's downloads. They need the
 * request's cookies (next/headers), which only exist inside Next's pipeline. Each gets its rate
 * limit, one log line per refusal or failure and its metrics, as the protocol routes do.
 */
const ENDPOINTS = {
  authorize: "protocol",
  end_session: "protocol",
  account_login: "protocol",
  admin_login: "admin_signin",
  admin_callback: "admin_signin",
  auth_callback: false,
  account_callback: false,
  account_return: false,
  admin_try_start: false,
  admin_try_callback: false,
  admin_logout: false,
  admin_forbidden: false,
  admin_setup: "admin_signin",
  admin_audit_export: false,
  upstream_auth: false,
} as const satisfies Record<string, Limit>;

export type EndpointName = keyof typeof ENDPOINTS;

/** A refusal a page shows as its answer (an error redirect, an error page): `refused` is its outcome for the metrics and the log. */
export type Shown = { response: Response; refused: string };

/**
 * A page endpoint: a redirect, an HTML page or a download, and its own way of showing a failure
 * (by default the OAuth JSON error). `read` takes the parameters (a failure is counted against the
 * limits, then refused; by default the query); `early` answers a request that must not be counted at
 * all (a React Server Components fetch of a sign-in step).
 */
export type Page<P> = {
  early?: (request: Request) => Response | undefined;
  read?: (request: Request) => Promise<P>;
  answer: (keyfob: Keyfob, request: Request, params: P, caller: Caller) => Promise<Response | Shown> | Response | Shown;
  /** The failure as the browser sees it; `limited` when the limits refused it, before the answer. */
  refuse?: (error: OAuthError, context: { keyfob: Keyfob; request: Request; params?: P; limited: boolean }) => Response | Promise<Response>;
};

/**
 * Wraps a page endpoint as a route handler: reads the parameters, applies the endpoint's rate limit,
 * maps every failure (toOAuthError) to the page's refusal, logs one line per refusal or failure
 * (never the parameters' values) and counts requests and their duration in the metrics. `keyfob` is
 * the process-wide one unless a test supplies another.
 */
export function endpoint<P>(
  name: EndpointName,
  page: Page<P>,
  keyfob: () => Keyfob = runtimeKeyfob,
): (request: Request) => Promise<Response> {
  const limit: Limit = ENDPOINTS[name];
  return async (request: Request): Promise<Response> => {
    const early = page.early?.(request);
    if (early) return early;
    const k = keyfob();
    const served = serving(name);
    let params: P | undefined;
    let limited = true;
    const caller: Caller = { endpoint: name, ip: clientIp(request) };
    try {
      // Bad parameters are counted against the limits too: read first, refuse after counting.
      let readError: unknown;
      params = await (page.read ?? (queryParams as (request: Request) => Promise<P>))(request).catch((error: unknown) => {
        readError = error;
        return undefined;
      });
      await countRequest(k, limit, caller);
      limited = false;
      if (readError) throw readError;
      const answer = await page.answer(k, request, params as P, caller);
      if (answer instanceof Response) return answer;
      served.refused(answer.refused, answer.response.status);
      return answer.response;
    } catch (caught) {
      const error = served.failed(caught);
      return page.refuse ? page.refuse(error, { keyfob: k, request, params, limited }) : errorResponse(error);
    } finally {
      served.done();
    }
  };
}

/** A page's parameters when it says nothing else: the query. */
const queryParams = async (request: Request) => new URL(request.url).searchParams;

/**
 * A route handler's answers to the methods it does not take: 405 with the Allow header RFC 9110
 * 15.5.6 requires (Next.js's own 405 has none), and OPTIONS naming the methods (Next's would count
 * these answers as methods taken), as the protocol routes answer (lib/http/routes.ts). A route file
 * exports those it does not define: `export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");`.
 */
export function otherMethods(...taken: ("GET" | "POST")[]) {
  const allow = { Allow: [...taken, ...(taken.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ") };
  const notAllowed = () => new Response(null, { status: 405, headers: allow });
  return {
    GET: notAllowed,
    HEAD: notAllowed,
    POST: notAllowed,
    PUT: notAllowed,
    PATCH: notAllowed,
    DELETE: notAllowed,
    OPTIONS: () => new Response(null, { status: 204, headers: allow }),
  };
}
