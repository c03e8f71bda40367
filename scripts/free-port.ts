/**
 * Free localhost ports for the dev tools: scripts/, test/, e2e/ and bench/ all start servers on
 * ports of their own. Here rather than in test/support so that scripts need not import tests.
 */
import { execFileSync } from "node:child_process";
import net from "node:net";

/** A port free on localhost now (the OS picks it; another process may take it before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "localhost", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Distinct free ports, found synchronously in a child process (for a config that cannot await). */
export function freePortsSync(count: number): number[] {
  const script = `
    const net = require("node:net"); const servers = []; const ports = [];
    (function next() {
      if (ports.length === ${count}) { console.log(JSON.stringify(ports)); servers.forEach((s) => s.close()); return; }
      const server = net.createServer(); servers.push(server);
      server.listen(0, "localhost", () => { ports.push(server.address().port); next(); });
    })();`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
}
