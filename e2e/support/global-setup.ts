/** Starts the Google and Apple stand-ins for the whole run (see upstream.ts for the ports). */
import { baseURL } from "../../playwright.config";
import { startIdp } from "./idp";
import { upstreams } from "./upstream";

export default async function globalSetup() {
  const servers = await Promise.all([startIdp(upstreams.google, baseURL), startIdp(upstreams.apple, baseURL)]);
  return async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  };
}
