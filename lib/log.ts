/**
 * One JSON line per event on stdout/stderr. Callers pass identifiers (client_id, kid, error codes),
 * never tokens, states, codes, signatures or secrets.
 */
type Fields = Record<string, unknown>;

function write(level: "info" | "warn" | "error", message: string, fields: Fields = {}) {
  if (process.env.KEYFOB_LOG === "silent") return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields });
  (level === "info" ? process.stdout : process.stderr).write(`${line}\n`);
}

export const log = {
  info: (message: string, fields?: Fields) => write("info", message, fields),
  warn: (message: string, fields?: Fields) => write("warn", message, fields),
  error: (message: string, fields?: Fields) => write("error", message, fields),
};
