/**
 * Keyfob's log: one JSON line per event (pino), `{"level":"info","time":"…","msg":"…",…fields}`;
 * info and below on stdout, warnings and errors on stderr. The level is LOG_LEVEL (`KEYFOB_LOG`
 * overrides it: `silent` in tests). A line written while a request is served carries its
 * `request_id` (withRequest). Callers pass identifiers (client_id, kid, error codes), never tokens,
 * states, codes, signatures or secrets; fields with a secret's name are redacted all the same.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type DestinationStream, type Logger } from "pino";

type Fields = Record<string, unknown>;

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * When the reader of stdout or stderr goes away (a supervisor or test runner that died), a write
 * fails with EPIPE on an 'error' event nobody handled: the server crashed or, with an
 * uncaughtException handler that logs (Next.js installs one), wrote into the closed pipe again and
 * spun (seen at 68% CPU, deaf to SIGTERM). Lines to a closed stream are dropped; serving goes on.
 * Keyfob's lines go through pino's own streams (which drop them on EPIPE likewise); these
 * handlers cover what Next.js and the scripts write to process.stdout and process.stderr.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}

/** Field names whose values are secrets wherever a caller passes them by mistake. */
const SECRET_FIELDS = [
  "access_token",
  "refresh_token",
  "id_token",
  "token",
  "client_secret",
  "code_verifier",
  "device_code",
  "user_code",
  "secret",
  "password",
  "signature",
  "authorization",
  "cookie",
];

/** The level from the environment: KEYFOB_LOG, else LOG_LEVEL, else info (a bad value is loadConfig's to refuse). */
function configuredLevel(env: Record<string, string | undefined> = process.env): LogLevel {
  for (const value of [env.KEYFOB_LOG, env.LOG_LEVEL]) if (LOG_LEVELS.includes(value as LogLevel)) return value as LogLevel;
  return "info";
}

/**
 * Asynchronous writes (pino's SonicBoom on the file descriptors): a request's line is queued, not
 * written to the pipe before the answer; what is queued is flushed at exit.
 */
function standardStreams(): DestinationStream {
  return pino.multistream(
    [
      { level: "trace", stream: pino.destination({ fd: 1, sync: false }) },
      { level: "warn", stream: pino.destination({ fd: 2, sync: false }) },
    ],
    { dedupe: true },
  );
}

function rootLogger(destination: DestinationStream, level: LogLevel): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...SECRET_FIELDS, "headers.authorization", "headers.cookie"], censor: "[redacted]" },
      // The request's id on every line it writes (a child logger per request costs more).
      mixin: () => {
        const served = shared.requests.getStore();
        return served ? { request_id: served.id } : {}; // pino merges the line's fields into it: a new one
      },
    },
    destination,
  );
}

/**
 * One logger and one request context per process: Next.js bundles a copy of this module into each
 * route, and those copies must write through the same streams and see the same request.
 */
type Shared = { root?: Logger; requests: AsyncLocalStorage<ServedRequest> };
const SHARED = Symbol.for("keyfob.log");
const global = globalThis as { [SHARED]?: Shared };
global[SHARED] ??= { requests: new AsyncLocalStorage<ServedRequest>() };
const shared = global[SHARED];

function root(): Logger {
  shared.root ??= rootLogger(standardStreams(), configuredLevel());
  return shared.root;
}

/** The request being served: its id, and once known its endpoint (the access line's `route`) and a refusal's error code (its span's). */
export type ServedRequest = { id: string; route?: string; error?: string };

/** Runs `serve` as request `id`: every line written meanwhile carries the id. */
export function withRequest<T>(id: string, serve: (request: ServedRequest) => T): T {
  const request: ServedRequest = { id };
  return shared.requests.run(request, serve, request);
}

/** The request being served, if any. */
export const servedRequest = (): ServedRequest | undefined => shared.requests.getStore();

export const log = {
  info: (message: string, fields?: Fields) => root().info(fields, message),
  warn: (message: string, fields?: Fields) => root().warn(fields, message),
  error: (message: string, fields?: Fields) => root().error(fields, message),
};

/** Whether info lines are written (the access line is skipped, not even built, when they are not). */
export const logsInfo = (): boolean => root().isLevelEnabled("info");

/** For a command whose stdout is its answer (the admin CLI, --json): every line goes to stderr. */
export function logToStderr(): void {
  shared.root = rootLogger(pino.destination({ fd: 2, sync: true }), configuredLevel());
}

/** Hands every line to `write` at `level` until the returned function is called (tests). */
export function logInto(write: (line: string) => void, level: LogLevel = "info"): () => void {
  const previous = shared.root;
  shared.root = rootLogger({ write }, level);
  return () => {
    shared.root = previous;
  };
}
