/**
 * Keyfob's admin command line: clients, redirect URIs, signers, secrets, signing keys, accounts and
 * their sessions. Changes go through the same admin actions as the dashboard and the management API
 * (lib/admin/changes.ts: the same validation, the same audit). Run `npm run keyfob -- help`.
 */
import "./load-env";
import { parseArgs } from "node:util";
import { prepareStorage } from "../lib/bootstrap";
import { userInfo } from "node:os";
import { ALL_SCOPES, type Admin } from "../lib/admin/access";
import { runAdminChange, type AdminChangeName } from "../lib/admin/changes";
import * as admin from "../lib/admin/operations";
import { normalizeClientId } from "../lib/clients/client-id";
import { listClients, RegistryError } from "../lib/clients/registry";
import { ConfigError, loadConfig } from "../lib/config";
import { createKeyfob, type Keyfob } from "../lib/keyfob";
import { hasControlCharacter } from "../lib/oauth/params";

const USAGE = `Usage: npm run keyfob -- <command>

  clients list
  clients add --name <name> [--id <client_id>] [--logo <https URL>]   client_id defaults to a generated one
  clients enable <client_id>
  clients disable <client_id>
  clients delete <client_id>
  clients secret <client_id> [--overlap <seconds>]  make confidential with a new secret (printed once); --overlap
                                                   keeps the replaced secret valid that long (at most 30 days)
  clients end-overlap <client_id>                  end the overlap now: the replaced secret stops working
  clients set <client_id> [--name <name>] [--logo <https URL>] [--require-pkce yes|no]
              [--resource-server yes|no] [--refresh-tokens yes|no] [--management-api yes|no]
              [--management-scopes "<scope> ..."] [--require-par yes|no] [--device-flow yes|no]
              [--device-offline-access yes|no] [--token-exchange yes|no] [--dpop yes|no]
              [--backchannel-logout-uri <uri>] [--backchannel-logout-session-required yes|no]
                                                   change settings: PKCE for a confidential client too (public clients
                                                   always need it), introspecting other clients' tokens, offline_access,
                                                   the management API (client_credentials; confidential only) and its
                                                   scopes: keyfob:admin (all), keyfob:read, keyfob:clients,
                                                   keyfob:accounts, keyfob:keys; --require-par: authorization
                                                   requests only through PAR (POST /par, RFC 9126); where logout
                                                   tokens are POSTed when a session ends ("" for none), and
                                                   whether the client needs sid in them;
                                                   --device-offline-access yes: device grants may carry
                                                   offline_access too (with --refresh-tokens yes)
                                                   --token-exchange yes: may exchange its access tokens for
                                                   vehicle tokens (RFC 8693 token exchange)
                                                   --dpop yes: token requests must carry a DPoP proof (RFC 9449),
                                                   every token bound to a key
  redirect-uris add <client_id> <uri>
  redirect-uris remove <client_id> <uri>
  post-logout-uris add <client_id> <uri>           where the client may send the browser after logout
  post-logout-uris remove <client_id> <uri>
  origins add <client_id> <origin>                 allow browser pages on <origin> (CORS), besides the redirect URIs' origins
  origins remove <client_id> <origin>
  signers add <client_id> <address> [--expires <ISO date>]
  signers revoke <client_id> <address>
  keys list                                        signing keys: upcoming, current, retired
  keys revoke <kid>                                emergency: unpublish a compromised key at once and refuse every
                                                   token it signed; if it was current, a new key signs from now
  accounts show <id|address|email>                 identities, linked wallets, live sessions, tokens, block status
  accounts block <id|address|email>                no login anywhere; revokes its sessions, codes and tokens at once
  accounts unblock <id|address|email>
  accounts delete <id|address|email>               delete with identities and sessions, revoking its tokens
  sessions revoke <account> [<session id>]         end one login session (id from accounts show), or all of them
  admins list                                      configured admins (ADMIN_ADDRESSES, ADMIN_EMAILS) and granted ones
  admins grant <address>                           make a wallet's account an admin: on every instance at once
  admins revoke <address>                          take a granted role away, ending its dashboard sessions`;

/** The operator at the command line: has the database, so is an admin; changes are audited under this label. */
const operator: Admin = { accountId: "cli", label: `cli:${userInfo().username}`, scopes: ALL_SCOPES };

type Command = (k: Keyfob, args: string[], options: Record<string, string | undefined>) => Promise<unknown>;

/** Runs an admin action as the operator (validated and audited like the dashboard's); a refusal becomes one line on stderr. */
async function act(k: Keyfob, name: AdminChangeName, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await runAdminChange(k, operator, name, input);
  if (result.ok) return result.value;
  const [field, message] = Object.entries(result.fieldErrors ?? {})[0] ?? ["input", result.error];
  throw new RegistryError(field, message);
}

/** The account an operator names by id, wallet address or email. */
async function account(k: Keyfob, reference: string | undefined): Promise<string> {
  const found = await admin.resolveAccountReference(k, operator, need(reference, "account"));
  if (!found) throw new RegistryError("account", `no account matches ${reference}`);
  if ("ambiguous" in found)
    throw new RegistryError("account", `several accounts have this email: ${found.ambiguous.join(", ")}; name one by id`);
  return found.id;
}

const yes = (value: boolean | undefined) => (value === undefined ? undefined : String(value));

const commands: Record<string, Command> = {
  "clients list": async (k) => {
    for (const c of await listClients(k.store)) {
      console.log(`${c.id}  ${c.enabled ? "enabled " : "disabled"}  ${c.name}`);
      console.log(`    PKCE          ${c.secretHash && !c.requirePkce ? "optional" : "required"}`);
      if (c.resourceServer) console.log("    resource server (introspects other clients' tokens)");
      if (c.refreshTokensAllowed) console.log("    refresh tokens allowed");
      if (c.requirePushedAuthorizationRequests) console.log("    pushed authorization requests (PAR) required");
      if (c.deviceFlow) console.log(`    device authorization grant allowed${c.deviceFlowOfflineAccess ? ", with refresh tokens" : ""}`);
      if (c.tokenExchange) console.log("    vehicle token exchange allowed (RFC 8693)");
      if (c.dpopBoundAccessTokens) console.log("    DPoP required (sender-constrained tokens only)");
      for (const r of c.redirectUris) console.log(`    redirect URI  ${r.uri}`);
      for (const r of c.postLogoutRedirectUris) console.log(`    post-logout   ${r.uri}`);
      for (const o of c.allowedOrigins) console.log(`    origin        ${o.origin}`);
      if (c.backchannelLogoutUri)
        console.log(`    back-channel  ${c.backchannelLogoutUri}${c.backchannelLogoutSessionRequired ? "  (sid required)" : ""}`);
      for (const s of c.signers) {
        const status = s.revokedAt
          ? `revoked ${s.revokedAt.toISOString()}`
          : s.expiresAt
            ? `expires ${s.expiresAt.toISOString()}`
            : "active";
        console.log(`    signer        ${s.address}  ${status}`);
      }
    }
  },
  "clients add": async (k, _args, o) => {
    if (!o.name) throw new RegistryError("name", "--name is required");
    const { clientId } = await act(k, "client.create", { id: o.id, name: o.name, logoUrl: o.logo });
    console.log(`client ${clientId} created`);
  },
  "clients enable": (k, [id]) =>
    act(k, "client.enable", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} enabled`)),
  "clients disable": (k, [id]) =>
    act(k, "client.disable", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} disabled`)),
  "clients delete": (k, [id]) =>
    act(k, "client.delete", { clientId: need(id, "client_id") }).then(() => console.log(`client ${id} deleted`)),
  "clients secret": async (k, [id], o) => {
    const { secret, previousSecretExpiresAt } = await act(k, "client.rotate_secret", {
      clientId: need(id, "client_id"),
      overlapSeconds: o.overlap,
    });
    console.log(`client secret for ${id} (shown once, stored hashed):\n${secret}`);
    if (previousSecretExpiresAt) console.log(`the previous secret works until ${(previousSecretExpiresAt as Date).toISOString()}`);
  },
  "clients end-overlap": (k, [id]) =>
    act(k, "client.end_secret_overlap", { clientId: need(id, "client_id") }).then(() =>
      console.log(`the previous secret of ${id} no longer works`),
    ),
  "clients set": async (k, [id], o) => {
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
      backchannelLogoutUri: o["backchannel-logout-uri"],
      backchannelLogoutSessionRequired: yes(yesNo(o["backchannel-logout-session-required"], "backchannel-logout-session-required")),
      deviceFlow: yes(yesNo(o["device-flow"], "device-flow")),
      deviceFlowOfflineAccess: yes(yesNo(o["device-offline-access"], "device-offline-access")),
      tokenExchange: yes(yesNo(o["token-exchange"], "token-exchange")),
      dpopBoundAccessTokens: yes(yesNo(o.dpop, "dpop")),
    });
    console.log(`client ${id}: ${JSON.stringify(settings)}`);
  },
  "post-logout-uris add": (k, [id, uri]) =>
    act(k, "post_logout_redirect_uri.add", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
      console.log(`post-logout redirect URI ${uri} added`),
    ),
  "post-logout-uris remove": (k, [id, uri]) =>
    act(k, "post_logout_redirect_uri.remove", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
      console.log(`post-logout redirect URI ${uri} removed`),
    ),
  "origins add": (k, [id, origin]) =>
    act(k, "allowed_origin.add", { clientId: need(id, "client_id"), origin: need(origin, "origin") }).then(() =>
      console.log(`origin ${origin} allowed`),
    ),
  "origins remove": (k, [id, origin]) =>
    act(k, "allowed_origin.remove", { clientId: need(id, "client_id"), origin: need(origin, "origin") }).then(() =>
      console.log(`origin ${origin} removed`),
    ),
  "redirect-uris add": (k, [id, uri]) =>
    act(k, "redirect_uri.add", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
      console.log(`redirect URI ${uri} added`),
    ),
  "redirect-uris remove": (k, [id, uri]) =>
    act(k, "redirect_uri.remove", { clientId: need(id, "client_id"), uri: need(uri, "uri") }).then(() =>
      console.log(`redirect URI ${uri} removed`),
    ),
  "signers add": async (k, [id, address], o) => {
    const expires = o.expires ? new Date(o.expires) : undefined;
    if (expires && Number.isNaN(expires.getTime())) throw new RegistryError("expires", "--expires must be an ISO 8601 date");
    const { signer } = (await act(k, "signer.add", {
      clientId: need(id, "client_id"),
      address: need(address, "address"),
      expiresAt: expires?.toISOString(),
    })) as { signer: { address: string } };
    console.log(`signer ${signer.address} enabled for ${normalizeClientId(id!)}`);
  },
  "signers revoke": (k, [id, address]) =>
    act(k, "signer.revoke", { clientId: need(id, "client_id"), address: need(address, "address") }).then(() =>
      console.log(`signer ${address} revoked`),
    ),
  "keys list": async (k) => {
    // The access set first, then the vehicle tokens' set; newest first in each.
    const keys = [...(await admin.keySchedule(k, operator))].sort(
      (a, b) => a.purpose.localeCompare(b.purpose) || b.activatesAt.getTime() - a.activatesAt.getTime(),
    );
    for (const key of keys)
      console.log(`${key.kid}  ${key.purpose.padEnd(7)}  ${key.status.padEnd(8)}  signs from ${key.activatesAt.toISOString()}`);
  },
  "keys revoke": async (k, [kid]) => {
    const result = await act(k, "key.revoke", { kid: need(kid, "kid") });
    console.log(result.message);
  },
  "accounts show": async (k, [reference]) => {
    const found = (await admin.getAccount(k, operator, await account(k, reference)))!;
    const at = (date: Date | null) => (date ? date.toISOString() : "-");
    console.log(
      `account ${found.id}  ${found.blockedAt ? `BLOCKED since ${at(found.blockedAt)}` : "active"}  created ${at(found.createdAt)}`,
    );
    if (found.adminRole || found.configuredAdmin)
      console.log(
        `    admin         ${found.configuredAdmin ? "configured (ADMIN_ADDRESSES)" : `granted by ${found.adminRole!.grantedBy} on ${at(found.adminRole!.grantedAt)}`}`,
      );
    for (const i of found.identities) {
      const who =
        i.provider === "web3"
          ? `${i.subject}${i.subject === found.id ? " (the account's own address)" : " (linked wallet)"}`
          : `${i.email ?? "-"}${i.email ? (i.emailVerified ? " (verified)" : " (unverified)") : ""}  subject ${i.subject}`;
      console.log(`    identity      ${i.provider.padEnd(8)} ${who}  last login ${at(i.lastLoginAt)}`);
    }
    console.log(`    tokens        ${found.holdings.accessTokens} active access tokens, ${found.holdings.refreshGrants} refresh grants`);
    if (found.sessions.length === 0) console.log("    sessions      none live");
    for (const session of found.sessions) {
      console.log(
        `    session       ${session.id}  via ${session.connector}  last used ${at(session.lastSeenAt)}  ends ${at(session.expiresAt)}${session.ip ? `  from ${session.ip}` : ""}`,
      );
    }
  },
  "accounts block": async (k, [reference]) => {
    const id = await account(k, reference);
    const { revokedTokens, revokedSessions } = await act(k, "account.block", { accountId: id });
    console.log(
      `account ${id} blocked: ${revokedTokens} access tokens and ${revokedSessions} sessions revoked, with its refresh tokens and codes`,
    );
  },
  "accounts unblock": async (k, [reference]) => {
    const id = await account(k, reference);
    await act(k, "account.unblock", { accountId: id });
    console.log(`account ${id} unblocked`);
  },
  "accounts delete": async (k, [reference]) => {
    const id = await account(k, reference);
    const { revokedTokens, endedSessions } = await act(k, "account.delete", { accountId: id });
    console.log(`account ${id} deleted: ${revokedTokens} access tokens revoked, ${endedSessions} sessions ended`);
  },
  "sessions revoke": async (k, [reference, sessionId]) => {
    const id = await account(k, reference);
    const { revoked } = await act(k, "session.revoke", { accountId: id, sessionId });
    console.log(sessionId ? `session ${sessionId} of ${id} revoked` : `${revoked} session${revoked === 1 ? "" : "s"} of ${id} revoked`);
  },
  "admins list": async (k) => {
    for (const address of k.config.adminAddresses) console.log(`${address}  configured (ADMIN_ADDRESSES)`);
    for (const email of k.config.adminEmails) console.log(`${email}  configured (ADMIN_EMAILS, as a verified email)`);
    for (const role of await admin.listAdmins(k, operator))
      console.log(`${role.accountId}  granted by ${role.grantedBy} on ${role.grantedAt.toISOString()}`);
  },
  "admins grant": (k, [address]) =>
    act(k, "admin.grant", { accountId: need(address, "address") }).then(() => console.log(`${address} is an admin`)),
  "admins revoke": (k, [address]) =>
    act(k, "admin.revoke", { accountId: need(address, "address") }).then(() => console.log(`${address} is no longer an admin`)),
};

function yesNo(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== "yes" && value !== "no") throw new RegistryError(name, `--${name} takes yes or no`);
  return value === "yes";
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new RegistryError(name, `<${name}> is required`);
  return value;
}

/** Arguments reach PostgreSQL: refuse control characters (NUL is refused by the database) with a clear line. */
function refuseControlCharacters(values: (string | undefined)[]) {
  if (values.some((value) => value !== undefined && hasControlCharacter(value)))
    throw new RegistryError("arguments", "must not contain control characters");
}

/**
 * The arguments with every option first (as `--name=value`) and every other argument after `--`:
 * this CLI has no short options, and a value such as a session id (base64url) may begin with a dash,
 * which parseArgs would otherwise take for an unknown option.
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
    else if (arg.includes("=") || i + 1 === args.length) options.push(arg);
    else options.push(`${arg}=${args[++i]}`);
  }
  return [...options, "--", ...positionals];
}

async function main() {
  const { positionals, values } = parseArgs({
    args: optionsFirst(process.argv.slice(2)),
    allowPositionals: true,
    options: {
      name: { type: "string" },
      id: { type: "string" },
      logo: { type: "string" },
      expires: { type: "string" },
      overlap: { type: "string" },
      "require-pkce": { type: "string" },
      "resource-server": { type: "string" },
      "refresh-tokens": { type: "string" },
      "management-api": { type: "string" },
      "device-flow": { type: "string" },
      "device-offline-access": { type: "string" },
      "token-exchange": { type: "string" },
      "management-scopes": { type: "string" },
      "require-par": { type: "string" },
      "backchannel-logout-uri": { type: "string" },
      "backchannel-logout-session-required": { type: "string" },
      dpop: { type: "string" },
    },
  });
  const command = commands[positionals.slice(0, 2).join(" ")];
  if (!command) {
    console.log(USAGE);
    process.exit(positionals.length === 0 || positionals[0] === "help" ? 0 : 2);
  }
  refuseControlCharacters([...positionals, ...Object.values(values)]);
  const { config, stop } = await prepareStorage(loadConfig());
  const k = createKeyfob({ ...config, dbPoolSize: 2 });
  try {
    await command(k, positionals.slice(2), values);
  } finally {
    await k.keys.close();
    await k.close();
    await stop();
  }
}

main().catch((error) => {
  if (error instanceof RegistryError) console.error(`error: ${error.field}: ${error.message}`);
  else if (error instanceof ConfigError) console.error(error.message);
  else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
