/**
 * Keyfob's admin command line: clients, redirect URIs, signers, secrets and signing keys. It calls the same
 * lib/admin operations as the dashboard, and its changes are audited. Run `npm run keyfob -- help`.
 */
import "./load-env";
import { parseArgs } from "node:util";
import { prepareStorage } from "../lib/bootstrap";
import { userInfo } from "node:os";
import type { Admin } from "../lib/admin/access";
import * as admin from "../lib/admin/operations";
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
  clients secret <client_id>                       make confidential with a new secret (printed once)
  clients set <client_id> [--name <name>] [--logo <https URL>] [--require-pkce yes|no]
              [--resource-server yes|no] [--refresh-tokens yes|no]
                                                   change settings: PKCE for a confidential client too (public clients
                                                   always need it), introspecting other clients' tokens, offline_access
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
                                                   token it signed; if it was current, a new key signs from now`;

/** The operator at the command line: has the database, so is an admin; changes are audited under this label. */
const operator: Admin = { accountId: "cli", label: `cli:${userInfo().username}` };

type Command = (k: Keyfob, args: string[], options: Record<string, string | undefined>) => Promise<unknown>;

const commands: Record<string, Command> = {
  "clients list": async (k) => {
    for (const c of await listClients(k.db)) {
      console.log(`${c.id}  ${c.enabled ? "enabled " : "disabled"}  ${c.name}`);
      console.log(`    PKCE          ${c.secretHash && !c.requirePkce ? "optional" : "required"}`);
      if (c.resourceServer) console.log("    resource server (introspects other clients' tokens)");
      if (c.refreshTokensAllowed) console.log("    refresh tokens allowed");
      for (const r of c.redirectUris) console.log(`    redirect URI  ${r.uri}`);
      for (const r of c.postLogoutRedirectUris) console.log(`    post-logout   ${r.uri}`);
      for (const o of c.allowedOrigins) console.log(`    origin        ${o.origin}`);
      for (const s of c.signers) {
        const status = s.revokedAt ? `revoked ${s.revokedAt.toISOString()}` : s.expiresAt ? `expires ${s.expiresAt.toISOString()}` : "active";
        console.log(`    signer        ${s.address}  ${status}`);
      }
    }
  },
  "clients add": async (k, _args, o) => {
    if (!o.name) throw new RegistryError("name", "--name is required");
    const client = await admin.createClient(k, operator, { id: o.id, name: o.name, logoUrl: o.logo });
    console.log(`client ${client.id} created`);
  },
  "clients enable": (k, [id]) => admin.setClientEnabled(k, operator, need(id, "client_id"), true).then(() => console.log(`client ${id} enabled`)),
  "clients disable": (k, [id]) => admin.setClientEnabled(k, operator, need(id, "client_id"), false).then(() => console.log(`client ${id} disabled`)),
  "clients delete": (k, [id]) => admin.deleteClient(k, operator, need(id, "client_id")).then(() => console.log(`client ${id} deleted`)),
  "clients secret": async (k, [id]) => {
    const secret = await admin.rotateClientSecret(k, operator, need(id, "client_id"));
    console.log(`client secret for ${id} (shown once, stored hashed):\n${secret}`);
  },
  "clients set": async (k, [id], o) => {
    const settings = await admin.updateClient(k, operator, need(id, "client_id"), {
      name: o.name,
      logoUrl: o.logo,
      requirePkce: yesNo(o["require-pkce"], "require-pkce"),
      resourceServer: yesNo(o["resource-server"], "resource-server"),
      refreshTokensAllowed: yesNo(o["refresh-tokens"], "refresh-tokens"),
    });
    console.log(`client ${id}: ${JSON.stringify(settings)}`);
  },
  "post-logout-uris add": (k, [id, uri]) =>
    admin.addPostLogoutRedirectUri(k, operator, need(id, "client_id"), need(uri, "uri")).then(() => console.log(`post-logout redirect URI ${uri} added`)),
  "post-logout-uris remove": (k, [id, uri]) =>
    admin.removePostLogoutRedirectUri(k, operator, need(id, "client_id"), need(uri, "uri")).then(() => console.log(`post-logout redirect URI ${uri} removed`)),
  "origins add": (k, [id, origin]) =>
    admin.addAllowedOrigin(k, operator, need(id, "client_id"), need(origin, "origin")).then(() => console.log(`origin ${origin} allowed`)),
  "origins remove": (k, [id, origin]) =>
    admin.removeAllowedOrigin(k, operator, need(id, "client_id"), need(origin, "origin")).then(() => console.log(`origin ${origin} removed`)),
  "redirect-uris add": (k, [id, uri]) =>
    admin.addRedirectUri(k, operator, need(id, "client_id"), need(uri, "uri")).then(() => console.log(`redirect URI ${uri} added`)),
  "redirect-uris remove": (k, [id, uri]) =>
    admin.removeRedirectUri(k, operator, need(id, "client_id"), need(uri, "uri")).then(() => console.log(`redirect URI ${uri} removed`)),
  "signers add": async (k, [id, address], o) => {
    const expires = o.expires ? new Date(o.expires) : undefined;
    if (expires && Number.isNaN(expires.getTime())) throw new RegistryError("expires", "--expires must be an ISO 8601 date");
    const signer = await admin.addSigner(k, operator, need(id, "client_id"), need(address, "address"), expires);
    console.log(`signer ${signer.address} enabled for ${signer.clientId}`);
  },
  "signers revoke": (k, [id, address]) =>
    admin.revokeSigner(k, operator, need(id, "client_id"), need(address, "address")).then(() => console.log(`signer ${address} revoked`)),
  "keys list": async (k) => {
    const keys = [...(await admin.keySchedule(k, operator))].sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime());
    for (const key of keys) console.log(`${key.kid}  ${key.status.padEnd(8)}  signs from ${key.activatesAt.toISOString()}`);
  },
  "keys revoke": async (k, [kid]) => {
    const result = await admin.revokeSigningKey(k, operator, need(kid, "kid"));
    console.log(result.message);
  },
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
  if (values.some((value) => value !== undefined && hasControlCharacter(value))) throw new RegistryError("arguments", "must not contain control characters");
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      id: { type: "string" },
      logo: { type: "string" },
      expires: { type: "string" },
      "require-pkce": { type: "string" },
      "resource-server": { type: "string" },
      "refresh-tokens": { type: "string" },
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
