import { describe, expect, it } from "vitest";
import { loadConfig, unknownVariables, warnUnknownVariables } from "./config";
import { logInto } from "./log";

describe("loadConfig", () => {
  it("has working defaults for a fresh clone", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      issuerUrl: "http://localhost:3000",
      port: 3000,
      chainId: 1,
      accessTokenTtl: 1209600,
      challengeTtl: 600,
      keyRotationPeriod: 30 * 86400,
      keyPublishLead: 86400,
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.rpcUrls).toEqual([]);
  });

  it("reads durations with units and strips the issuer's trailing slash", () => {
    const config = loadConfig({
      ACCESS_TOKEN_TTL: "3600",
      CHALLENGE_TTL: "5m",
      KEY_ROTATION_PERIOD: "7d",
      KEY_PUBLISH_LEAD: "12h",
      ISSUER_URL: "https://auth.example.com/",
    });
    expect(config).toMatchObject({
      accessTokenTtl: 3600,
      challengeTtl: 300,
      keyRotationPeriod: 604800,
      keyPublishLead: 43200,
      issuerUrl: "https://auth.example.com",
    });
  });

  it("names every invalid variable at once", () => {
    let message = "";
    try {
      loadConfig({ CHAIN_ID: "mainnet", CHALLENGE_TTL: "-5", ISSUER_URL: "ftp://x", RPC_URL: "nope" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration:/);
    expect(message).toContain('CHAIN_ID: expected a positive whole number, got "mainnet"');
    expect(message).toContain("CHALLENGE_TTL: expected a positive duration");
    expect(message).toContain("ISSUER_URL: expected an http(s) URL");
    expect(message).toContain("RPC_URL: expected an http(s) URL");
  });

  it("gives ID tokens the access token's lifetime unless ID_TOKEN_TTL says otherwise", () => {
    expect(loadConfig({ ACCESS_TOKEN_TTL: "2h" })).toMatchObject({ accessTokenTtl: 7200, idTokenTtl: 7200 });
    expect(loadConfig({ ACCESS_TOKEN_TTL: "2h", ID_TOKEN_TTL: "5m" })).toMatchObject({ accessTokenTtl: 7200, idTokenTtl: 300 });
    expect(() => loadConfig({ ID_TOKEN_TTL: "soon" })).toThrow(/ID_TOKEN_TTL: expected a positive duration/);
  });

  it("trusts identities only over https, or http on this machine", () => {
    for (const name of ["ISSUER_URL", "RPC_URL", "GOOGLE_ISSUER", "APPLE_ISSUER"]) {
      expect(() => loadConfig({ [name]: "http://rpc.example.com" }), name).toThrow(new RegExp(`${name}: must use https`));
      for (const local of ["http://localhost:8545", "http://127.0.0.1:8545", "http://[::1]:8545", "https://rpc.example.com"]) {
        expect(() => loadConfig({ [name]: local }), `${name}=${local}`).not.toThrow();
      }
    }
  });

  it("requires KEYFOB_SECRET with a shared DATABASE_URL", () => {
    expect(() => loadConfig({ DATABASE_URL: "postgresql://u:p@db:5432/keyfob" })).toThrow(/KEYFOB_SECRET: required with DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: "postgresql://u:p@db:5432/keyfob", KEYFOB_SECRET: "short" })).toThrow(/at least 32/);
  });

  it("keeps key publication longer than JWKS caching and shorter than the rotation period", () => {
    expect(() => loadConfig({ KEY_PUBLISH_LEAD: "1m" })).toThrow(/KEY_PUBLISH_LEAD: must be at least 10 minutes/);
    expect(() => loadConfig({ KEY_PUBLISH_LEAD: "30d", KEY_ROTATION_PERIOD: "30d" })).toThrow(/shorter than KEY_ROTATION_PERIOD/);
  });

  it("bounds the back-channel logout retry schedule", () => {
    expect(loadConfig({}).backchannelLogoutRetry).toEqual({ firstDelay: 2, maxDelay: 600, giveUpAfter: 86400 });
    const retry = { BACKCHANNEL_LOGOUT_RETRY_FIRST: "5s", BACKCHANNEL_LOGOUT_RETRY_MAX: "1h", BACKCHANNEL_LOGOUT_RETRY_FOR: "3d" };
    expect(loadConfig(retry).backchannelLogoutRetry).toEqual({ firstDelay: 5, maxDelay: 3600, giveUpAfter: 259200 });
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_FIRST: "0" })).toThrow(
      /BACKCHANNEL_LOGOUT_RETRY_FIRST: expected a positive duration/,
    );
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_FIRST: "2h" })).toThrow(/BACKCHANNEL_LOGOUT_RETRY_FIRST: must be at most 1 hour/);
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_MAX: "2d" })).toThrow(/BACKCHANNEL_LOGOUT_RETRY_MAX: must be at most 1 day/);
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_FOR: "31d" })).toThrow(/BACKCHANNEL_LOGOUT_RETRY_FOR: must be at most 30 days/);
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_FIRST: "1m", BACKCHANNEL_LOGOUT_RETRY_MAX: "30s" })).toThrow(
      /BACKCHANNEL_LOGOUT_RETRY_MAX: must be at least BACKCHANNEL_LOGOUT_RETRY_FIRST/,
    );
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_RETRY_FIRST: "1m", BACKCHANNEL_LOGOUT_RETRY_FOR: "1m" })).toThrow(
      /BACKCHANNEL_LOGOUT_RETRY_FOR: must be longer than BACKCHANNEL_LOGOUT_RETRY_FIRST/,
    );
  });

  it("reads the networks back-channel logout may reach besides public ones, and names a bad entry", () => {
    expect(loadConfig({}).backchannelLogoutAllowedNetworks).toEqual([]);
    const networks = loadConfig({ BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: "127.0.0.0/8, ::1/128 10.1.2.3" }).backchannelLogoutAllowedNetworks;
    expect(networks.map(([address, bits]) => `${address}/${bits}`)).toEqual(["127.0.0.0/8", "::1/128", "10.1.2.3/32"]);
    for (const bad of ["10/8", "10.0.0.0/33", "fd00::/129", "10.0.0.0/8/1", "localhost", "10.0.0.0/x"])
      expect(() => loadConfig({ BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: bad }), bad).toThrow(
        `BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: "${bad}" is not an IP address or CIDR range`,
      );
    expect(() => loadConfig({ BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: "::ffff:10.0.0.0/104" })).toThrow(/write IPv4 ranges as IPv4/);
  });

  it("reads an empty optional variable as unset", () => {
    const config = loadConfig({ ACCESS_TOKEN_TTL: "2h", ID_TOKEN_TTL: "", RPC_QUORUM: "", METRICS_PORT: "", HOST: "" });
    expect(config).toMatchObject({ idTokenTtl: 7200, rpcQuorum: 0, metricsPort: undefined, host: undefined });
  });

  it("names a bad admin address together with the other problems", () => {
    expect(() => loadConfig({ ADMIN_ADDRESSES: "0x12", PORT: "x" })).toThrow(/PORT: .*\n {2}ADMIN_ADDRESSES: "0x12" is not a 0x address/);
  });
});

describe("unknown variables", () => {
  it("names a near miss of a setting, and an unknown name under a Keyfob prefix; nothing else", () => {
    const env = {
      ADMIN_ADRESSES: "0xabc",
      RPC_URLS: "https://rpc.example",
      DATABSE_URL: "postgresql://x",
      KEYFOB_SECERT: "s",
      RATE_LIMIT_PER_USER: "1/s",
      KEYFOB_LEGACY_MODE: "true",
      ADMIN_ADDRESSES: "0xabc",
      KEYFOB_CLIENT_ID: "app",
      HOME: "/root",
      PATH: "/usr/bin",
      HOSTNAME: "box",
      NODE_ENV: "production",
      GOOGLE_APPLICATION_CREDENTIALS: "/key.json",
    };
    expect(unknownVariables(env)).toEqual([
      { variable: "ADMIN_ADRESSES", meant: "ADMIN_ADDRESSES" },
      { variable: "RPC_URLS", meant: "RPC_URL" },
      { variable: "DATABSE_URL", meant: "DATABASE_URL" },
      { variable: "KEYFOB_SECERT", meant: "KEYFOB_SECRET" },
      { variable: "RATE_LIMIT_PER_USER" },
      { variable: "KEYFOB_LEGACY_MODE" },
    ]);
  });

  it("warns once per variable, with its name and never its value", () => {
    const lines: string[] = [];
    const restore = logInto((line) => lines.push(line));
    try {
      warnUnknownVariables({ ADMIN_ADRESSES: "0xsecretvalue", KEYFOB_LEGACY: "hunter2", PORT: "3000" });
    } finally {
      restore();
    }
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      {
        level: "warn",
        variable: "ADMIN_ADRESSES",
        meant: "ADMIN_ADDRESSES",
        msg: "unknown setting ADMIN_ADRESSES ignored: did you mean ADMIN_ADDRESSES?",
      },
      { level: "warn", variable: "KEYFOB_LEGACY", msg: "unknown setting KEYFOB_LEGACY ignored" },
    ]);
    expect(lines.join("")).not.toMatch(/secretvalue|hunter2/);
  });
});
