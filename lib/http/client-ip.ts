import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import proxyaddr from "proxy-addr";
import type { HttpRequest } from "./request";

/**
 * The request header in which Keyfob's HTTP server hands the caller's address to the handlers.
 * The server removes whatever a client sent under this name before setting it.
 */
export const CLIENT_IP_HEADER = "x-keyfob-client-ip";

/** Which proxies' X-Forwarded-For entries to believe: (address, hop index) → trusted. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * TRUSTED_PROXIES, as Express's `trust proxy` reads it: empty (no proxy: the socket's address is
 * the client), a number of proxy hops in front of Keyfob, or a comma-separated list of addresses,
 * CIDR ranges and the presets `loopback`, `linklocal` and `uniquelocal`. Throws on a bad entry.
 */
export function parseTrustedProxies(setting: string): ProxyTrust {
  const value = setting.trim();
  if (value === "") return () => false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return proxyaddr.compile(value.split(/\s*,\s*/).filter(Boolean));
}

/**
 * The caller's address: the socket's, or, through trusted proxies only, the nearest
 * X-Forwarded-For entry a trusted proxy did not add. IPv4-mapped IPv6 is written as IPv4.
 */
export function clientAddress(request: IncomingMessage, trust: ProxyTrust): string | undefined {
  if (!request.socket.remoteAddress) return undefined;
  return normalizeAddress(proxyaddr(request, trust));
}

/** IPv4-mapped IPv6 written as IPv4, any other address as ipaddr.js writes it, anything else as it is. */
export const normalizeAddress = remembered((address) => {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address().toString()
    : parsed.toString();
});

/**
 * What limits count a caller under: an IPv4 address as it is, an IPv6 address by its /64 (the
 * first 64 bits of the parsed address, the block one subscriber usually holds), written as
 * `2001:db8::/64`. IPv4-mapped IPv6 counts as its IPv4 address.
 */
export const addressBucket = remembered((ip) => {
  const address = normalizeAddress(ip);
  if (!ipaddr.IPv6.isValid(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
});

/**
 * `parse`, remembering its answers: every request parses its caller's address two or three times,
 * most callers' again and again (0.05 ms of a Flow A handshake's two requests in the 2026-11-27
 * profile). Bounded: all forgotten at once when full.
 */
function remembered(parse: (address: string) => string): (address: string) => string {
  const answers = new Map<string, string>();
  return (address) => {
    let answer = answers.get(address);
    if (answer === undefined) {
      answer = parse(address);
      if (answers.size >= 4096) answers.clear();
      answers.set(address, answer);
    }
    return answer;
  };
}

/** The caller's address as the server vouched for it, or undefined outside Keyfob's server (tests calling handlers). */
export function clientIp(request: HttpRequest): string | undefined {
  return request.headers.get(CLIENT_IP_HEADER) ?? undefined;
}
