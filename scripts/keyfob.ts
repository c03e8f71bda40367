/**
 * Keyfob's admin command line: clients, redirect URIs, signers, secrets, signing keys, accounts,
 * their sessions, and admins. Changes go through the same admin actions as the dashboard and the
 * management API (lib/admin/changes.ts: the same validation, the same audit). Run `npx keyfob help`
 * (bin/keyfob.mjs) or `npm run keyfob -- help`; `npx keyfob <command> --help` explains one command,
 * and every read takes `--json`. The exit code says what failed (EXIT below, docs/cli.md).
 */
import "./load-env";
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { ALL_SCOPES, type Admin } from "../lib/admin/access";
import { clientView } from "../lib/admin/api";
import { runAdminChange, type AdminChangeName } from "../lib/admin/changes";
import * as admin from "../lib/admin/operations";
import { prepareStorage } from "../lib/bootstrap";
import { normalizeClientId } from "../lib/clients/client-id";
import { listClients, RegistryError, type Refusal } from "../lib/clients/registry";
import { ConfigError, loadConfig } from "../lib/config";
import { createKeyfob, type Keyfob } from "../lib/keyfob";
import { logToStderr } from "../lib/log";
import { hasControlCharacter } from "../lib/oauth/params";

logToStderr(); // stdout holds the command's answer only (JSON with --json)

/** The exit codes (docs/cli.md lists them). */
const EXIT = { ok: 0, usage: 1, notFound: 2, conflict: 3, unavailable: 4, failed: 5 } as const;

/** A refusal to the operator: one line on stderr, and its exit code. */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const REFUSAL_EXIT: Record<Refusal, number> = { invalid: EXIT.usage, not_found: EXIT.notFound, conflict: EXIT.conflict };

type Options = Record<string, string | boolean | undefined> & { json?: boolean };

/** A command: its arguments and what it does (for `help` and `--help`), and whether it is a read (`--json`). */
type Command = {
  args?: string;
  about: string;
  read?: true;
  run: (k: Keyfob, args: string[], options: Options) => Promise<unknown>;
};

/** The operator at the command line: has the database, so is an admin; changes are audited under this label. */
const operator: Admin = { accountId: "cli", label: `cli:${userInfo().username}`, scopes: ALL_SCOPES };

/** Runs an admin action as the operator (validated and audited like the dashboard's); a refusal becomes one line on stderr. */
async function act(k: Keyfob, name: AdminChangeName, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await runAdminChange(k, operator, name, input);
  if (result.ok) return result.value;
  const [first] = Object.entries(result.fieldErrors ?? {});
  // Without a field it is about the whole action (a key change this instance may not make): said as is.
  if (!first) throw new CliError(`error: ${result.error}`, EXIT.failed);
  throw new RegistryError(...first, result.refusal);
}

/** The account an operator names by id, wallet address or email. */
async function account(k: Keyfob, reference: string | undefined): Promise<string> {
  const found = await admin.resolveAccountReference(k, operator, need(reference, "account"));
  if (!found) throw new RegistryError("account", `no account matches ${reference}`, "not_found");
  if ("ambiguous" in found)
    throw new RegistryError("account", `several accounts have this email: ${found.ambiguous.join(", ")}; name one by id`);
  return found.id;
}

/** A read's answer: JSON with --json, else the lines. */
function show(options: Options, data: unknown, lines: () => string[]) {
  console.log(options.json ? JSON.stringify(data, null, 2) : lines().join("\n"));
}

const at = (date: Date | null | undefined) => (date ? date.toISOString() : "-");
const yes = (value: boolean | undefined) => (value === undefined ? undefined : String(value));
const CLIENT_SETTINGS = `[--name <name>] [--logo <https URL>] [--require-pkce yes|no]
            [--resource-server yes|no] [--refresh-tokens yes|no] [--management-api yes|no]
            [--management-scopes "<scope> ..."] [--require-par yes|no] [--require-consent yes|no]
            [--device-flow yes|no] [--device-offline-access yes|no] [--token-exchange yes|no] [--dpop yes|no]
            [--backchannel-logout-uri <uri>] [--backchannel-logout-session-required yes|no]
            [--resources "<uri> ..."] [--alg RS256|PS256|ES256]`;

const commands: Record<string, Command> = {
  "clients list": {
    about: "every client with its settings, redirect URIs, origins and signers",
    read: true,
    async run(k, _args, o) {
      const now = k.clock.now();
      const clients = (await listClients(k.store)).map((c) => clientView(admin.toAdminClient(c, now)));
      show(o, clients, () =>
        clients.flatMap((c) => [
          `${c.id}  ${c.enabled ? "enabled " : "disabled"}  ${c.name}`,
          `    PKCE          ${c.confidential && !c.requirePkce ? "optional" : "required"}`,
          `    signs with    ${c.idTokenSignedResponseAlg}`,
          ...(c.resourceServer ? ["    resource server (introspects other clients' tokens)"] : []),
          ...(c.refreshTokensAllowed ? ["    refresh tokens allowed"] : []),
          ...(c.requirePushedAuthorizationRequests ? ["    pushed authorization requests (PAR) required"] : []),
          ...(c.requireConsent ? ["    third-party: users' consent asked"] : []),
          ...(c.deviceFlow ? [`    device authorization grant allowed${c.deviceFlowOfflineAccess ? ", with refresh tokens" : ""}`] : []),
          ...(c.tokenExchange ? ["    vehicle token exchange allowed (RFC 8693)"] : []),
          ...(c.dpopBoundAccessTokens ? ["    DPoP required (sender-constrained tokens only)"] : []),
          ...(c.tokenEndpointAuthMethod
            ? [`    authenticates ${c.tokenEndpointAuthMethod}${c.jwksUri ? `, keys at ${c.jwksUri}` : ""}`]
            : []),
          ...c.redirectUris.map((uri) => `    redirect URI  ${uri}`),
          ...c.postLogoutRedirectUris.map((uri) => `    post-logout   ${uri}`),
          ...c.allowedOrigins.map((origin) => `    origin        ${origin}`),
          ...c.resources.map((resource) => `    resource      ${resource}`),
          ...(c.backchannelLogoutUri
            ? [`    back-channel  ${c.backchannelLogoutUri}${c.backchannelLogoutSessionRequired ? "  (sid required)" : ""}`]
            : []),
          ...c.signers.map(
            (s) =>
              `    signer        ${s.address}  ${s.revokedAt ? `revoked ${at(s.revokedAt)}` : s.expiresAt ? `expires ${at(s.expiresAt)}` : "active"}`,
          ),
        ]),
      );
    },
  },
  "clients add": {
    args: "--name <name> [--id <client_id>] [--logo <https URL>]",
    about: "register a client; client_id defaults to a generated one",
    async run(k, _args, o) {
      if (!o.name) throw new RegistryError("name", "--name is required");
      const { clientId } = await act(k, "client.create", { id: o.id, name: o.name, logoUrl: o.logo });
      console.log(`client ${clientId} created`);
    },
  },
  "clients enable": {
    args: "<client_id>",
    about: "let the client get tokens again",
    run: (k, [id]) => act(k, "client.enable", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} enabled`)),
  },
  "clients disable": {
    args: "<client_id>",
    about: "refuse the client's requests from now on",
    run: (k, [id]) => act(k, "client.disable", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} disabled`)),
  },
  "clients delete": {
    args: "<client_id>",
    about: "delete the client with its URIs and signers",
    run: (k, [id]) => act(k, "client.delete", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} deleted`)),
  },
  "clients secret": {
    args: "<client_id> [--overlap <seconds>]",
    about: `make confidential with a new secret (printed once); --overlap keeps the replaced secret valid
that long (at most 30 days)`,
    async run(k, [id], o) {
      const { secret, previousSecretExpiresAt } = await act(k, "client.rotate_secret", {
        clientId: need(id, "client_id"),
        overlapSeconds: o.overlap,
      });
      console.log(`client secret for ${id} (shown once, stored hashed):\n${secret}`);
      if (previousSecretExpiresAt) console.log(`the previous secret works until ${(previousSecretExpiresAt as Date).toISOString()}`);
    },
  },
  "clients end-overlap": {
    args: "<client_id>",
    about: "end a rotation's overlap now: the replaced secret stops working",
    run: (k, [id]) =>
      act(k, "client.end_secret_overlap", { clientId: need(id, "client_id") }).then(() =>
        console.log(`the previous secret of ${id} no longer works`),
      ),
  },
  "clients auth": {
    args: "<client_id> --method private_key_jwt|client_secret_jwt|secret [--jwks-uri <https URL> | --jwks-file <path>]",
    about: `how the client authenticates: client assertions (RFC 7523) with its keys (private_key_jwt: a
JWK Set file or a jwks_uri Keyfob fetches; a license's signers need neither), or MACed with its
secret (client_secret_jwt: rotate the secret after setting it), or its secret (secret)`,
    async run(k, [id], o) {
      // Value options are strings (VALUE_OPTIONS).
      const method = need(o.method as string | undefined, "method");
      const file = o["jwks-file"] as string | undefined;
      const jwks = file === undefined ? undefined : readFileSync(file, "utf8");
      await act(k, "client.set_authentication", {
        clientId: need(id, "client_id"),
        tokenEndpointAuthMethod: method === "secret" ? undefined : method,
        jwks,
        jwksUri: o["jwks-uri"],
      });
      console.log(`client ${id} authenticates with ${method}`);
    },
  },
  "clients set": {
    args: `<client_id> ${CLIENT_SETTINGS}`,
    about: `change settings: PKCE for a confidential client too (public clients always need it),
introspecting other clients' tokens, offline_access, the management API (client_credentials;
confidential only) and its scopes: keyfob:admin (all), keyfob:read, keyfob:clients,
keyfob:accounts, keyfob:keys; --require-par: authorization requests only through PAR (POST /par,
RFC 9126); --require-consent yes: a third-party client, whose users the hosted login asks for
consent; where logout tokens are POSTed when a session ends ("" for none), and whether the client
needs sid in them; --device-offline-access yes: device grants may carry offline_access too (with
--refresh-tokens yes); --token-exchange yes: may exchange its access tokens for vehicle tokens
(RFC 8693 token exchange); --dpop yes: token requests must carry a DPoP proof (RFC 9449), every
token bound to a key; --resources: the resource servers it may get access tokens for (RFC 8707,
absolute URIs; replaces the list, "" for none); --alg: the alg its ID, access and logout tokens are signed with
(id_token_signed_response_alg; PS256 or ES256 for FAPI 2.0, RS256 by default)`,
    async run(k, [id], o) {
      const { settings } = await act(k, "client.update", {
        clientId: need(id, "client_id"),
        name: o.name,
        logoUrl: o.logo,
        requirePkce: yes(yesNo(o["require-pkce"], "require-pkce")),
        resourceServer: yes(yesNo(o["resource-server"], "resource-server")),
        refreshTokensAllowed: yes(yesNo(o["refresh-tokens"], "refresh-tokens")),
        managementApi: yes(yesNo(o["management-api"], "management-api")),
        managementScopes: o["management-scopes"],
        requirePushedAuthorizationRequests: yes(yesNo(o["require-par"], "require-par")),
        requireConsent: yes(yesNo(o["require-consent"], "require-consent")),
        backchannelLogoutUri: o["backchannel-logout-uri"],
        backchannelLogoutSessionRequired: yes(yesNo(o["backchannel-logout-session-required"], "backchannel-logout-session-required")),
        deviceFlow: yes(yesNo(o["device-flow"], "device-flow")),
        deviceFlowOfflineAccess: yes(yesNo(o["device-offline-access"], "device-offline-access")),
        tokenExchange: yes(yesNo(o["token-exchange"], "token-exchange")),
        dpopBoundAccessTokens: yes(yesNo(o.dpop, "dpop")),
        resources: o.resources,
        idTokenSignedResponseAlg: o.alg,
      });
      console.log(`client ${id}: ${JSON.stringify(settings)}`);
    },
  },
  "redirect-uris add": {
    args: "<client_id> <uri>",
    about: "register a redirect URI (https, or http on localhost only; matched exactly)",
    run: (k, [id, uri]) =>
      act(k, "redirect_uri.add", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
        console.log(`redirect URI ${uri} added`),
      ),
  },
  "redirect-uris remove": {
    args: "<client_id> <uri>",
    about: "remove a redirect URI",
    run: (k, [id, uri]) =>
      act(k, "redirect_uri.remove", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
        console.log(`redirect URI ${uri} removed`),
      ),
  },
  "post-logout-uris add": {
    args: "<client_id> <uri>",
    about: "where the client may send the browser after logout",
    run: (k, [id, uri]) =>
      act(k, "post_logout_redirect_uri.add", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
        console.log(`post-logout redirect URI ${uri} added`),
      ),
  },
  "post-logout-uris remove": {
    args: "<client_id> <uri>",
    about: "remove a post-logout redirect URI",
    run: (k, [id, uri]) =>
      act(k, "post_logout_redirect_uri.remove", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
        console.log(`post-logout redirect URI ${uri} removed`),
      ),
  },
  "origins add": {
    args: "<client_id> <origin>",
    about: "allow browser pages on <origin> (CORS), besides the redirect URIs' origins",
    run: (k, [id, origin]) =>
      act(k, "allowed_origin.add", { clientId: need(id, "client_id"), origin: need(origin, "origin") }).then(() =>
        console.log(`origin ${origin} allowed`),
      ),
  },
  "origins remove": {
    args: "<client_id> <origin>",
    about: "stop allowing browser pages on <origin>",
    run: (k, [id, origin]) =>
      act(k, "allowed_origin.remove", { clientId: need(id, "client_id"), origin: need(origin, "origin") }).then(() =>
        console.log(`origin ${origin} removed`),
      ),
  },
  "signers add": {
    args: "<client_id> <address> [--expires <ISO date>]",
    about: "let a key sign the license's Flow A challenges (until --expires)",
    async run(k, [id, address], o) {
      const expires = o.expires ? new Date(String(o.expires)) : undefined;
      if (expires && Number.isNaN(expires.getTime())) throw new RegistryError("expires", "--expires must be an ISO 8601 date");
      const { signer } = (await act(k, "signer.add", {
        clientId: need(id, "client_id"),
        address: need(address, "address"),
        expiresAt: expires?.toISOString(),
      })) as { signer: { address: string } };
      console.log(`signer ${signer.address} enabled for ${normalizeClientId(id!)}`);
    },
  },
  "signers revoke": {
    args: "<client_id> <address>",
    about: "the key no longer signs for the license (from the next token request)",
    run: (k, [id, address]) =>
      act(k, "signer.revoke", { clientId: need(id, "client_id"), address: need(address, "address") }).then(() =>
        console.log(`signer ${address} revoked`),
      ),
  },
  "keys list": {
    about: "signing keys: upcoming, current, retired",
    read: true,
    async run(k, _args, o) {
      // The access set first, then the vehicle tokens' set; newest first in each.
      const keys = [...(await admin.keySchedule(k, operator))]
        .sort((a, b) => a.purpose.localeCompare(b.purpose) || b.activatesAt.getTime() - a.activatesAt.getTime())
        .map(({ kid, purpose, alg, status, activatesAt }) => ({ kid, purpose, alg, status, activatesAt }));
      show(o, keys, () =>
        keys.map((key) => `${key.kid}  ${key.purpose.padEnd(7)}  ${key.alg}  ${key.status.padEnd(8)}  signs from ${at(key.activatesAt)}`),
      );
    },
  },
  "keys rotate": {
    args: "[--alg RS256|PS256|ES256]",
    about: `publish a new key now, which signs after KEY_PUBLISH_LEAD: of one alg of the access set with
--alg, else of every alg in use and the vehicle tokens' set`,
    async run(k, _args, o) {
      await act(k, "key.rotate", { alg: o.alg });
      const upcoming = (await admin.keySchedule(k, operator)).filter((key) => key.status === "upcoming");
      console.log(
        upcoming.map((key) => `upcoming ${key.kid}  ${key.purpose.padEnd(7)}  ${key.alg}  signs from ${at(key.activatesAt)}`).join("\n"),
      );
    },
  },
  "keys revoke": {
    args: "<kid>",
    about: `emergency: unpublish a compromised key at once and refuse every token it signed; if it was
current, a new key signs from now`,
    async run(k, [kid]) {
      const result = await act(k, "key.revoke", { kid: need(kid, "kid") });
      console.log(result.message);
    },
  },
  "accounts show": {
    args: "<id|address|email>",
    about: "identities, linked wallets, live sessions, tokens, block status",
    read: true,
    async run(k, [reference], o) {
      const found = (await admin.getAccount(k, operator, await account(k, reference)))!;
      show(o, found, () => [
        `account ${found.id}  ${found.blockedAt ? `BLOCKED since ${at(found.blockedAt)}` : "active"}  created ${at(found.createdAt)}`,
        ...(found.adminRole || found.configuredAdmin
          ? [
              `    admin         ${found.configuredAdmin ? "configured (ADMIN_ADDRESSES)" : `granted by ${found.adminRole!.grantedBy} on ${at(found.adminRole!.grantedAt)}`}`,
            ]
          : []),
        ...found.identities.map((i) => {
          const who =
            i.provider === "web3"
              ? `${i.subject}${i.subject === found.id ? " (the account's own address)" : " (linked wallet)"}`
              : `${i.email ?? "-"}${i.email ? (i.emailVerified ? " (verified)" : " (unverified)") : ""}  subject ${i.subject}`;
          return `    identity      ${i.provider.padEnd(8)} ${who}  last login ${at(i.lastLoginAt)}`;
        }),
        `    tokens        ${found.holdings.accessTokens} active access tokens, ${found.holdings.refreshGrants} refresh grants`,
        ...(found.sessions.length === 0 ? ["    sessions      none live"] : []),
        ...found.sessions.map(
          (session) =>
            `    session       ${session.id}  via ${session.connector}  last used ${at(session.lastSeenAt)}  ends ${at(session.expiresAt)}${session.ip ? `  from ${session.ip}` : ""}`,
        ),
      ]);
    },
  },
  "accounts block": {
    args: "<id|address|email>",
    about: "no login anywhere; revokes its sessions, codes and tokens at once",
    async run(k, [reference]) {
      const id = await account(k, reference);
      const { revokedTokens, revokedSessions } = await act(k, "account.block", { accountId: id });
      console.log(
        `account ${id} blocked: ${revokedTokens} access tokens and ${revokedSessions} sessions revoked, with its refresh tokens and codes`,
      );
    },
  },
  "accounts unblock": {
    args: "<id|address|email>",
    about: "let a blocked account log in again",
    async run(k, [reference]) {
      const id = await account(k, reference);
      await act(k, "account.unblock", { accountId: id });
      console.log(`account ${id} unblocked`);
    },
  },
  "accounts delete": {
    args: "<id|address|email>",
    about: "delete with identities and sessions, revoking its tokens",
    async run(k, [reference]) {
      const id = await account(k, reference);
      const { revokedTokens, endedSessions } = await act(k, "account.delete", { accountId: id });
      console.log(`account ${id} deleted: ${revokedTokens} access tokens revoked, ${endedSessions} sessions ended`);
    },
  },
  "sessions revoke": {
    args: "<account> [<session id>]",
    about: "end one login session (id from accounts show), or all of them",
    async run(k, [reference, sessionId]) {
      const id = await account(k, reference);
      const { revoked } = await act(k, "session.revoke", { accountId: id, sessionId });
      console.log(sessionId ? `session ${sessionId} of ${id} revoked` : `${revoked} session${revoked === 1 ? "" : "s"} of ${id} revoked`);
    },
  },
  "admins list": {
    about: "configured admins (ADMIN_ADDRESSES, ADMIN_EMAILS) and granted ones",
    read: true,
    async run(k, _args, o) {
      const configured = (admin: string, source: string) => ({ admin, source, grantedBy: null, grantedAt: null });
      const admins = [
        ...k.config.adminAddresses.map((address) => configured(address, "ADMIN_ADDRESSES")),
        ...k.config.adminEmails.map((email) => configured(email, "ADMIN_EMAILS")),
        ...(await admin.listAdmins(k, operator)).map((role) => ({
          admin: role.accountId,
          source: "granted",
          grantedBy: role.grantedBy,
          grantedAt: role.grantedAt,
        })),
      ];
      show(o, admins, () =>
        admins.map((a) =>
          a.grantedAt
            ? `${a.admin}  granted by ${a.grantedBy} on ${at(a.grantedAt)}`
            : `${a.admin}  configured (${a.source}${a.source === "ADMIN_EMAILS" ? ", as a verified email" : ""})`,
        ),
      );
    },
  },
  "admins grant": {
    args: "<address>",
    about: "make a wallet's account an admin: on every instance at once, audited",
    run: (k, [address]) => act(k, "admin.grant", { accountId: need(address, "address") }).then(() => console.log(`${address} is an admin`)),
  },
  "admins revoke": {
    args: "<address>",
    about: "take a granted role away, ending its dashboard sessions",
    run: (k, [address]) =>
      act(k, "admin.revoke", { accountId: need(address, "address") }).then(() => console.log(`${address} is no longer an admin`)),
  },
};

const indent = (text: string, by: string) => text.replaceAll("\n", `\n${by}`);

const USAGE = `Usage: keyfob <command> [--help] [--json]      (in this folder: npx keyfob …, or npm run keyfob -- …)

${Object.entries(commands)
  .map(([name, c]) => `  ${name}${c.args ? ` ${indent(c.args, "  ")}` : ""}\n      ${indent(c.about, "      ")}`)
  .join("\n")}

--json prints a read (list, show) as JSON. Exit codes: 0 done, 1 usage or invalid input, 2 not found,
3 conflict (exists already, built in, configured), 4 database unavailable, 5 failed otherwise.`;

function commandHelp(name: string, c: Command): string {
  return `Usage: keyfob ${name}${c.args ? ` ${c.args}` : ""}${c.read ? " [--json]" : ""}\n\n${c.about}${c.read ? "\n\n--json  print the result as JSON" : ""}`;
}

function yesNo(value: string | boolean | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== "yes" && value !== "no") throw new RegistryError(name, `--${name} takes yes or no`);
  return value === "yes";
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new RegistryError(name, `<${name}> is required`);
  return value;
}

/** Arguments reach PostgreSQL: refuse control characters (NUL is refused by the database) with a clear line. */
function refuseControlCharacters(values: unknown[]) {
  if (values.some((value) => typeof value === "string" && hasControlCharacter(value)))
    throw new RegistryError("arguments", "must not contain control characters");
}

const FLAGS = ["json", "help"];

/**
 * The arguments with every option first (as `--name=value`) and every other argument after `--`:
 * this CLI has no short options, and a value such as a session id (base64url) may begin with a dash,
 * which parseArgs would otherwise take for an unknown option. --json and --help take no value.
 */
function optionsFirst(args: string[]): string[] {
  const options: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--")) positionals.push(arg);
    else if (arg.includes("=") || i + 1 === args.length || FLAGS.includes(arg.slice(2))) options.push(arg);
    else options.push(`${arg}=${args[++i]}`);
  }
  return [...options, "--", ...positionals];
}

const VALUE_OPTIONS = [
  "name",
  "method",
  "jwks-uri",
  "jwks-file",
  "id",
  "logo",
  "expires",
  "overlap",
  "require-pkce",
  "resource-server",
  "refresh-tokens",
  "management-api",
  "device-flow",
  "device-offline-access",
  "token-exchange",
  "management-scopes",
  "require-par",
  "require-consent",
  "backchannel-logout-uri",
  "backchannel-logout-session-required",
  "dpop",
  "resources",
  "alg",
];

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: optionsFirst(argv),
      allowPositionals: true,
      options: {
        ...Object.fromEntries(VALUE_OPTIONS.map((name) => [name, { type: "string" as const }])),
        json: { type: "boolean" },
        help: { type: "boolean" },
      },
    });
  } catch (error) {
    // An unknown option, or --json=… : a usage error, said in one line.
    throw new CliError(`error: ${error instanceof Error ? error.message : String(error)}; see keyfob --help`, EXIT.usage);
  }
}

/** A database that cannot be reached: what to do about it. */
function unavailable(error: unknown): CliError | undefined {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  const unreachable =
    ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "57P03", "3D000", "28P01"].includes(
      String(code),
    ) || /Can't reach database server|connection terminated|timeout exceeded when trying to connect/i.test(message);
  if (!unreachable) return undefined;
  const where = process.env.DATABASE_URL
    ? `the database in DATABASE_URL (${process.env.DATABASE_URL.replace(/\/\/[^@]*@/, "//")})`
    : "the embedded database";
  return new CliError(
    `error: cannot use ${where}: ${message}\n` +
      "Is PostgreSQL running there and DATABASE_URL right (in the environment or .env)? Without DATABASE_URL, " +
      "the CLI uses the embedded database that npm start runs, starting it when the server is not running.",
    EXIT.unavailable,
  );
}

async function main() {
  const { positionals, values } = parse(process.argv.slice(2));
  const name = positionals.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command) {
    const asked = positionals.length === 0 || positionals[0] === "help" || values.help;
    if (asked) return console.log(USAGE);
    throw new CliError(`error: unknown command: ${positionals.join(" ")}; see keyfob --help`, EXIT.usage);
  }
  if (values.help) return console.log(commandHelp(name, command));
  if (values.json && !command.read) throw new CliError(`error: --json is for reads (list, show); ${name} is a change`, EXIT.usage);
  refuseControlCharacters([...positionals, ...Object.values(values)]);
  const { config, stop } = await prepareStorage(loadConfig());
  const k = createKeyfob({ ...config, dbPoolSize: 2 });
  try {
    await command.run(k, positionals.slice(2), values);
  } finally {
    await k.keys.close();
    await k.close();
    await stop();
  }
}

// Done: the process ends by itself (exit code 0) once the pool and the embedded database are closed.
main().catch((error) => {
  const refused =
    error instanceof CliError
      ? error
      : error instanceof RegistryError
        ? new CliError(`error: ${error.field}: ${error.message}`, REFUSAL_EXIT[error.refusal])
        : error instanceof ConfigError
          ? new CliError(error.message, EXIT.usage)
          : (unavailable(error) ?? new CliError(`error: ${error instanceof Error ? error.message : String(error)}`, EXIT.failed));
  console.error(refused.message);
  process.exit(refused.exitCode);
});
