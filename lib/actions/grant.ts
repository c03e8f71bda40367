import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import type { AuthenticatedClient } from "../oauth/client-auth";
import type { DPoPProof } from "../oauth/dpop";
import { invalidRequest } from "../oauth/errors";
import type { Params } from "../oauth/params";
import type { Issued } from "../tokens/issue";

/**
 * A grant of the token endpoint (RFC 6749 4), as lib/actions/token.ts dispatches to it. Each grant
 * declares the parameters it takes (as node-oidc-provider's grants declare theirs): its action gets
 * those and nothing else of the request, as named fields, besides the client the request
 * authenticated as (once, before the grant), the request's DPoP proof and who calls.
 */
export type Grant<Response = unknown> = {
  /** The parameters the grant takes, the required ones first. */
  parameters: readonly string[];
  /** Runs the grant on the request's parameters; a required one missing or empty is invalid_request. */
  answer(keyfob: Keyfob, context: GrantContext, params: Params): Promise<Issued<Response>>;
};

/** What every grant gets besides its parameters. */
export type GrantContext = { client: AuthenticatedClient; proof?: DPoPProof; caller: Caller };

/** A grant's parameters, by name: the required ones always there. */
export type GrantParams<R extends string, O extends string> = { readonly [K in R]: string } & { readonly [K in O]?: string };

export type GrantRequest<P> = GrantContext & { params: P };

/** Declares a grant: the parameters it needs and may take, and its action, which gets them by name. */
export function grant<R extends string, O extends string = never, Response = unknown>(declaration: {
  required: readonly R[];
  optional?: readonly O[];
  handle: (keyfob: Keyfob, request: GrantRequest<GrantParams<R, O>>) => Promise<Issued<Response>>;
}): Grant<Response> {
  const { required, optional = [], handle } = declaration;
  return {
    parameters: [...required, ...optional],
    answer(keyfob, context, params) {
      const taken: Record<string, string | undefined> = {};
      for (const name of required) {
        taken[name] = params.get(name);
        if (taken[name] === undefined) throw invalidRequest(`missing required parameter: ${name}`);
      }
      for (const name of optional) taken[name] = params.get(name);
      return handle(keyfob, { ...context, params: taken as GrantParams<R, O> });
    },
  };
}
