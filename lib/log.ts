/**
 * One JSON line per event on stdout/stderr. Callers pass identifiers (client_id, kid, error codes),
 * never tokens, states, codes, signatures or secrets.
 */
type Fields = Record<string, unknown>;

/**
 * When the reader of stdout or stderr goes away (a supervisor or test runner that died), a write
 * fails with EPIPE on an 'error' event nobody handled: the server crashed or, with an
 * uncaughtException handler that logs (Next.js installs one), wrote into the closed pipe again and
 * spun (seen at 68% CPU, deaf to SIGTERM). Lines to a closed stream are dropped; serving goes on.
 */
const closed = new Set<NodeJS.WriteStream>();
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    closed.add(stream);
  });
}

let everythingToStderr = false;

/** For a command whose stdout is its answer (the admin CLI, --json): every line goes to stderr. */
export function logToStderr(): void {
  everythingToStderr = true;
}

function write(level: "info" | "warn" | "error", message: string, fields: Fields = {}) {
  if (process.env.KEYFOB_LOG === "silent") return;
  const stream = level === "info" && !everythingToStderr ? process.stdout : process.stderr;
  if (closed.has(stream)) return;
  stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`);
}

export const log = {
  info: (message: string, fields?: Fields) => write("info", message, fields),
  warn: (message: string, fields?: Fields) => write("warn", message, fields),
  error: (message: string, fields?: Fields) => write("error", message, fields),
};
