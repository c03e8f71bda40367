/**
 * Requests Keyfob sends to a URI that someone else chose (a client's back-channel logout URI).
 * They reach public unicast addresses only, and the networks the operator allows besides
 * (BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS): whoever registers a URI must not be able to aim Keyfob at
 * its own machine, its private network or a cloud metadata service, nor learn from the outcome
 * which ports answer there. At registration the host is checked as written (no DNS lookup); at
 * sending it is resolved once, every address it resolves to must pass, and the connection goes to
 * those vetted addresses themselves, so that a second DNS answer (rebinding) cannot move it. The
 * name stays the request's host, for SNI and the certificate check.
 */
import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/** An address range: an address and its prefix length. */
export type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Addresses and CIDR ranges (IPv4 or IPv6), comma or space separated; a bare address is a range
 * of one. Throws naming the first bad entry.
 */
export function parseNetworks(value: string): Network[] {
  return value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const [address, bits, ...rest] = entry.split("/");
      // Four-part IPv4 only: ipaddr.js would read "10/8" as 0.0.0.10/8.
      const kind = ipaddr.IPv4.isValidFourPartDecimal(address) ? "ipv4" : ipaddr.IPv6.isValid(address) ? "ipv6" : undefined;
      const max = kind === "ipv4" ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
      if (!kind || rest.length > 0 || !(prefix <= max))
        throw new Error(`"${entry}" is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)`);
      const parsed = ipaddr.parse(address);
      if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
        throw new Error(`"${entry}": write IPv4 ranges as IPv4 (such as 10.0.0.0/8)`);
      return [parsed, prefix];
    });
}

/** Whether Keyfob may send to `address`: public unicast (IPv4-mapped IPv6 as its IPv4 address), or in `allowed`. */
export function mayReach(address: string, allowed: readonly Network[]): boolean {
  const parsed = ipaddr.process(address);
  return parsed.range() === "unicast" || allowed.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
}

/**
 * Names that are never a public host, besides `localhost` (RFC 6761): names of one label (resolved
 * through search domains or hosts files, as `metadata` and `instance-data` are in clouds),
 * `.internal` (kept for private use by ICANN in 2024: metadata.google.internal, *.ec2.internal),
 * `.local` (mDNS, RFC 6762), `.home.arpa` (RFC 8375), and `metadata.goog`, Google Cloud's metadata server.
 */
const INTERNAL_NAME = /^[^.]+$|\.(internal|local|home\.arpa)$|^metadata\.goog$/;

/** Why a URI's host may not be registered, or undefined; no DNS lookup (sending checks what a name resolves to). */
export function hostProblem(hostname: string, allowed: readonly Network[]): string | undefined {
  if (registrable(hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, ""), allowed)) return undefined;
  return "must be on a public host: not a loopback, private, link-local, shared (CGNAT), unique-local or cloud metadata address or name, unless BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS allows it";
}

function registrable(host: string, allowed: readonly Network[]): boolean {
  if (isIP(host)) return mayReach(host, allowed);
  if (host === "localhost" || host.endsWith(".localhost")) return mayReach("127.0.0.1", allowed) || mayReach("::1", allowed);
  // What an internal name resolves to is known only when sending, which checks it then.
  return !INTERNAL_NAME.test(host) || allowed.length > 0;
}

/** What a host name resolves to; the system's resolver (hosts file, then DNS) unless a test gives its own. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true });

/** The host is, or resolved to, an address Keyfob may not reach. The message names no address: it goes to the audit log. */
export class UnreachableHost extends Error {
  override name = "UnreachableHost";
  constructor() {
    super("the URI's host is not on a network Keyfob may reach");
  }
}

/** The addresses of `hostname` (an address is its own), when Keyfob may reach every one. */
async function vetted(hostname: string, allowed: readonly Network[], resolve: Resolver): Promise<LookupAddress[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(host);
  const addresses = family ? [{ address: host, family }] : await resolve(host);
  if (addresses.length === 0 || !addresses.every(({ address }) => mayReach(address, allowed))) throw new UnreachableHost();
  return addresses;
}

/** A connection's `lookup` that answers the vetted addresses, whatever DNS would answer now. */
function pinned(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    // net.connect asks for every address when it may try both families (autoSelectFamily).
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

/** `promise`, or the signal's reason if it aborts first (a lookup cannot be cancelled, only left behind). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

export type OutboundOptions = {
  /** Networks besides public unicast that the request may reach. */
  allowed: readonly Network[];
  /** Ends the lookup and the request. */
  signal: AbortSignal;
  resolve?: Resolver;
};

/**
 * POSTs `form` (application/x-www-form-urlencoded) to `uri` at a vetted address of its host, and
 * resolves with the answer's status; a redirect is an answer, never followed. Throws
 * UnreachableHost, or the lookup's or connection's error (with its `code`), or the signal's abort.
 */
export async function postForm(uri: string, form: URLSearchParams, options: OutboundOptions): Promise<number> {
  const { allowed, signal, resolve = systemResolver } = options;
  const url = new URL(uri);
  const addresses = await abortable(vetted(url.hostname, allowed, resolve), signal);
  const body = form.toString();
  return new Promise((resolveStatus, reject) => {
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) },
        // A connection of its own, to the addresses vetted now: no pooled one to a name resolved earlier.
        agent: false,
        lookup: pinned(addresses),
        signal,
      },
      (response) => {
        resolveStatus(response.statusCode!);
        response.destroy(); // the body is not read
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * GETs `uri` at a vetted address of its host and resolves with its answer (a redirect is an
 * answer, never followed), the body read up to `maxBytes`: more aborts with an error. Throws as
 * postForm does.
 */
export async function getVetted(uri: string, options: OutboundOptions & { maxBytes: number }): Promise<Response> {
  const { allowed, signal, resolve = systemResolver, maxBytes } = options;
  const url = new URL(uri);
  const addresses = await abortable(vetted(url.hostname, allowed, resolve), signal);
  return new Promise((resolveAnswer, reject) => {
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      { method: "GET", headers: { accept: "application/json" }, agent: false, lookup: pinned(addresses), signal },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return void response.destroy(new Error(`the answer is larger than ${maxBytes} bytes`));
          chunks.push(chunk);
        });
        response.on("error", reject);
        response.on("end", () => resolveAnswer(new Response(Buffer.concat(chunks), { status: response.statusCode })));
      },
    );
    request.on("error", reject);
    request.end();
  });
}
