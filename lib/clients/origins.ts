import type { Database } from "../db/client";
import { normalizeClientId } from "./registry";

/**
 * The browser origins a client's requests may come from: the origin of each registered redirect
 * URI, and the extra origins an admin allowed (an app served from one origin that redirects to another).
 */
export async function allowedOrigins(db: Database, clientId: string): Promise<Set<string>> {
  const client = await db.client.findUnique({
    where: { id: normalizeClientId(clientId) },
    select: { redirectUris: { select: { uri: true } }, allowedOrigins: { select: { origin: true } } },
  });
  if (!client) return new Set();
  return new Set([...client.redirectUris.map(({ uri }) => new URL(uri).origin), ...client.allowedOrigins.map(({ origin }) => origin)]);
}
