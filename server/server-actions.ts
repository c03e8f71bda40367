/**
 * Server actions (a POST with a `Next-Action` header, to any page), screened before Next.js sees
 * them. Next 16.4.5 (app-render/action-handler.js) answers 500 to a foreign Origin, to a body over
 * its limit (its 413 error becomes a 500 for fetch actions), and to a body that React cannot decode
 * (JSON.parse or busboy throwing), and logs each with a stack trace; an unknown action id is
 * 409/400, also with a logged stack. Here: a foreign Origin is 403, a Content-Type that Next's
 * action client never sends 415, a larger body 413 (declared, or counted as it streams), an id that
 * is not in the build's manifest 409/400 as Next answers it (with the header its client router
 * reads), and a body whose root is not a JSON array (what React's encodeReply always sends, as the
 * text body or multipart part "0") 400. Everything else goes to Next, with the body read here.
 */
import { readFileSync } from "node:fs";
import { IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { log } from "../lib/log";
import { distDir } from "./build";

export type ServerActionScreen = {
  /** ISSUER_URL's origin: the only one a browser's action may come from. */
  origin: string;
  /** Next's serverActions.bodySizeLimit, in bytes. */
  bodyLimit: number;
  /** The build's action ids (server-reference-manifest.json); undefined under `next dev`, where they change. */
  actionIds?: Set<string>;
};

/** Next's default body limit for server actions (next.config.mjs sets no serverActions.bodySizeLimit). */
const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Length of the ids Next generates; another length is malformed (Next's 400, not its 409). */
const ACTION_ID_LENGTH = 42;

/** What the build says: its action ids and body limit. Read once, after Next has prepared. */
export function loadServerActionScreen(projectRoot: string, origin: string, dev: boolean): ServerActionScreen {
  const dist = distDir(projectRoot);
  let limit: string | number | undefined;
  try {
    type Files = { config: { experimental?: { serverActions?: { bodySizeLimit?: string | number } } } };
    limit = (JSON.parse(readFileSync(path.join(dist, "required-server-files.json"), "utf8")) as Files).config.experimental?.serverActions
      ?.bodySizeLimit;
  } catch (error) {
    if (!dev) throw error; // `next dev` writes no such file: Next's default applies
  }
  const bytes = createRequire(import.meta.url)("next/dist/compiled/bytes") as { parse(value: string | number): number | null };
  const bodyLimit = limit === undefined ? DEFAULT_BODY_LIMIT : (bytes.parse(limit) ?? DEFAULT_BODY_LIMIT);
  if (dev) return { origin, bodyLimit };
  const manifest = JSON.parse(readFileSync(path.join(dist, "server", "server-reference-manifest.json"), "utf8")) as Partial<
    Record<"node" | "edge", Record<string, unknown>>
  >;
  return { origin, bodyLimit, actionIds: new Set([...Object.keys(manifest.node ?? {}), ...Object.keys(manifest.edge ?? {})]) };
}

export function isServerAction(request: IncomingMessage): boolean {
  return request.method === "POST" && request.headers["next-action"] !== undefined;
}

/**
 * Screens a server action: answers a refusal itself and resolves undefined, or resolves the request
 * to hand to Next (a copy carrying the body read here).
 */
export async function screenServerAction(
  screen: ServerActionScreen,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<IncomingMessage | undefined> {
  const refuse = (status: number, reason: string, message: string, headers: Record<string, string> = {}) => {
    log.info("server action refused", { status, reason, path: request.url?.split("?")[0] });
    response
      .writeHead(status, { "Content-Type": "text/plain", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", ...headers })
      .end(message);
    return undefined;
  };
  // Same rule as /admin/logout: a browser names the page's origin; `null` (a sandboxed frame, a
  // redirect from elsewhere) is not Keyfob's. Keyfob's pages send a referrer to themselves
  // (proxy.ts), and Next itself refuses `null`. No Origin at all: not a browser's request.
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== screen.origin) return refuse(403, "origin", "Cross-site server action refused.");

  const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (!["text/plain", "multipart/form-data", "application/x-www-form-urlencoded"].includes(type)) {
    return refuse(415, "content_type", "A server action is text/plain or multipart/form-data.");
  }
  const id = String(request.headers["next-action"]);
  if (screen.actionIds && !screen.actionIds.has(id)) {
    // Next's own answer to an id it does not know (its client router reloads the page on it).
    const known = id.length === ACTION_ID_LENGTH;
    return refuse(known ? 409 : 400, "unknown_action", known ? "Server Action unavailable." : "Invalid Server Action request.", {
      "x-nextjs-action-not-found": "1",
    });
  }

  const tooLarge = () => refuse(413, "body_size", `The body exceeds ${screen.bodyLimit} bytes.`, { Connection: "close" });
  if (Number(request.headers["content-length"]) > screen.bodyLimit) return tooLarge();
  const body = await readBounded(request, screen.bodyLimit);
  if (body === undefined) return tooLarge();
  // Next answers a url-encoded "action" with its 404 page; there is nothing to decode.
  if (type !== "application/x-www-form-urlencoded" && !(await argumentsArray(body, request.headers["content-type"]!))) {
    return refuse(400, "malformed", "Invalid Server Action request.");
  }
  return withBody(request, body);
}

/** The body, or undefined once it is longer than `limit` (the rest is not read: the connection closes). */
function readBounded(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.off("data", onData).off("end", onEnd).pause();
        resolve(undefined);
      } else chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    request.on("data", onData).on("end", onEnd).on("error", reject);
  });
}

/** Whether the reply's root (the text body, or multipart part "0") is a JSON array: the action's arguments. */
async function argumentsArray(body: Buffer, contentType: string): Promise<boolean> {
  try {
    let root: unknown = body.toString("utf8");
    if (contentType.toLowerCase().startsWith("multipart/form-data")) {
      root = (await new Response(new Uint8Array(body), { headers: { "content-type": contentType } }).formData()).get("0");
    }
    return typeof root === "string" && Array.isArray(JSON.parse(root));
  } catch {
    return false;
  }
}

/** A copy of the request whose stream is `body` (the original's was read here), for Next to read again. */
function withBody(request: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(request.socket);
  copy.method = request.method;
  copy.url = request.url;
  copy.headers = request.headers;
  copy.rawHeaders = request.rawHeaders;
  copy.httpVersion = request.httpVersion;
  copy.httpVersionMajor = request.httpVersionMajor;
  copy.httpVersionMinor = request.httpVersionMinor;
  copy.complete = true;
  // Everything is pushed below: nothing to take from the socket, and ending this copy (read or
  // not) must not abort the connection, which belongs to the original.
  copy._read = () => {};
  copy._destroy = (error, callback) => callback(error);
  copy.push(body);
  copy.push(null);
  return copy;
}
