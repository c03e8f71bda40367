/**
 * Outbound requests to URIs others chose: which addresses and names pass, and that a request goes
 * to the address vetted, not to whatever a second DNS answer says. DNS cannot be controlled here
 * (no network, and the system resolver answers only from /etc/hosts), so the rebinding cases inject
 * a resolver: that is the one mock. The listeners and connections are real, on loopback addresses;
 * 127.0.0.2, allowed for the test, stands in for a public address, which cannot be listened on here.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { hostProblem, mayReach, parseNetworks, postForm, type Resolver, UnreachableHost } from "./outbound";

/** Addresses that only reach this machine, its networks or a cloud's metadata service (the review's examples first). */
const INTERNAL = [
  "127.0.0.1",
  "::1",
  "169.254.169.254", // AWS, Google Cloud, Azure, DigitalOcean, Oracle metadata
  "10.0.0.1",
  "fd00::1",
  "fd00:ec2::254", // AWS metadata over IPv6
  "100.100.100.200", // Alibaba Cloud metadata (shared address space, CGNAT)
  "192.0.0.192", // Oracle Cloud metadata
  "172.16.0.1",
  "192.168.1.1",
  "0.0.0.0",
  "::",
  "fe80::1",
  "::ffff:127.0.0.1",
  "::ffff:a9fe:a9fe", // 169.254.169.254, IPv4-mapped
  "64:ff9b::7f00:1", // 127.0.0.1 through NAT64
  "2002:7f00:1::", // 127.0.0.1 through 6to4
  "224.0.0.1",
  "255.255.255.255",
];

describe("which addresses and hosts may be reached", () => {
  it("public unicast addresses only, unless a network is allowed", () => {
    for (const address of INTERNAL) expect(mayReach(address, []), address).toBe(false);
    for (const address of ["93.184.216.34", "2606:4700::1111", "::ffff:93.184.216.34"]) expect(mayReach(address, []), address).toBe(true);
    const allowed = parseNetworks("127.0.0.0/8, ::1/128, 10.1.0.0/16");
    for (const address of ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", "10.1.2.3"])
      expect(mayReach(address, allowed), address).toBe(true);
    for (const address of ["10.2.0.1", "169.254.169.254", "fd00::1"]) expect(mayReach(address, allowed), address).toBe(false);
  });

  it("refuses at registration, without a lookup, addresses and names that are internal", () => {
    const hosts = [
      "127.0.0.1",
      "[::1]",
      "169.254.169.254",
      "10.0.0.1",
      "[fd00::1]",
      "[::ffff:7f00:1]",
      "localhost",
      "localhost.",
      "rp.localhost",
      "metadata.google.internal",
      "metadata.google.internal.",
      "metadata",
      "instance-data",
      "ip-10-0-0-1.ec2.internal",
      "printer.local",
      "nas.home.arpa",
      "metadata.goog",
    ];
    for (const host of hosts) expect(hostProblem(host, []), host).toMatch(/must be on a public host/);
    for (const host of ["rp.example.com", "93.184.216.34", "[2606:4700::1111]", "metadata.google.com", "internal.example.com"])
      expect(hostProblem(host, []), host).toBeUndefined();
    // Loopback allowed (development): localhost and loopback addresses pass, the rest does not.
    const loopback = parseNetworks("127.0.0.0/8,::1/128");
    for (const host of ["localhost", "rp.localhost", "127.0.0.1", "[::1]"]) expect(hostProblem(host, loopback), host).toBeUndefined();
    for (const host of ["169.254.169.254", "10.0.0.1", "[fd00::1]"]) expect(hostProblem(host, loopback), host).toMatch(/public host/);
    // An internal name's addresses are known only when sending, which checks them then.
    expect(hostProblem("rp.corp.internal", parseNetworks("10.0.0.0/8"))).toBeUndefined();
  });
});

describe("postForm", () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A listener on `host` (at `port`, or any) that records what reaches it and answers `status`. */
  async function listener(host: string, port = 0, status = 200) {
    const seen: { host?: string; body: string }[] = [];
    const server = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        seen.push({ host: request.headers.host, body });
        response.writeHead(status, status === 302 ? { location: "/elsewhere" } : {}).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    return { seen, port: (server.address() as AddressInfo).port };
  }

  /** A resolver giving `answers` in turn, one per lookup (the last one again after that), counting its lookups. */
  function answering(...answers: string[][]): Resolver & { lookups: number } {
    const resolve = async () => {
      const answer = answers[Math.min(resolve.lookups++, answers.length - 1)];
      return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    };
    resolve.lookups = 0;
    return resolve;
  }

  const form = new URLSearchParams({ logout_token: "t" });
  const signal = () => AbortSignal.timeout(5_000);

  it("connects to the address it vetted, not to the one a second DNS answer gives (rebinding)", async () => {
    const vetted = await listener("127.0.0.2");
    const rebound = await listener("127.0.0.1", vetted.port);
    const resolve = answering(["127.0.0.2"], ["127.0.0.1"]);
    const uri = `http://rp.rebinding.test:${vetted.port}/logout`;
    expect(await postForm(uri, form, { allowed: parseNetworks("127.0.0.2/32"), signal: signal(), resolve })).toBe(200);
    expect(vetted.seen).toEqual([{ host: `rp.rebinding.test:${vetted.port}`, body: "logout_token=t" }]);
    expect(rebound.seen).toEqual([]);
  });

  it("refuses a host when any of its addresses may not be reached, and sends nothing", async () => {
    const internal = await listener("127.0.0.1");
    for (const answer of [
      ["93.184.216.34", "10.0.0.1"],
      ["93.184.216.34", "127.0.0.1"],
      ["2606:4700::1111", "::ffff:127.0.0.1"],
      ["127.0.0.1"],
    ]) {
      const sent = postForm(`http://rp.example.com:${internal.port}/logout`, form, {
        allowed: [],
        signal: signal(),
        resolve: answering(answer),
      });
      await expect(sent, answer.join()).rejects.toThrow(UnreachableHost);
      await expect(sent).rejects.toThrow("the URI's host is not on a network Keyfob may reach");
    }
    // An address in the URI needs no lookup, and is refused the same.
    await expect(postForm(`http://127.0.0.1:${internal.port}/logout`, form, { allowed: [], signal: signal() })).rejects.toThrow(
      UnreachableHost,
    );
    expect(internal.seen).toEqual([]);
  });

  it("answers a redirect's status without following it", async () => {
    const redirecting = await listener("127.0.0.2", 0, 302);
    const uri = `http://127.0.0.2:${redirecting.port}/logout`;
    expect(await postForm(uri, form, { allowed: parseNetworks("127.0.0.2"), signal: signal() })).toBe(302);
    expect(redirecting.seen).toHaveLength(1); // /elsewhere was not asked for
  });
});
