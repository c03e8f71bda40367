import http from "node:http";
import { createChainVerifier } from "../../../lib/siwe/signature.ts";
import { freePort } from "../local-chain.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
const owner = privateKeyToAccount(generatePrivateKey());
const sig = await owner.signMessage({ message: "hi" });
const addr = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
async function run(label: string, url: string) {
  const v = createChainVerifier(url, 31337)!;
  const t = Date.now();
  try { console.log(label, await v(addr, "hi", sig), Date.now() - t); } catch (e: any) { console.log(label, "throws", e.name, e.code, e.status, Date.now() - t); }
}
await run("closed", `http://localhost:${await freePort()}`);
const servers: http.Server[] = [];
async function serve(handler: http.RequestListener) { const s = http.createServer(handler); servers.push(s); await new Promise<void>(r => s.listen(0, "localhost", () => r())); return `http://localhost:${(s.address() as any).port}`; }
await run("502", await serve((req, res) => { res.writeHead(502); res.end("bad gateway"); }));
await run("429", await serve((req, res) => { res.writeHead(429, {"content-type":"application/json"}); res.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}'); }));
await run("rpc -32005 @200", await serve((req, res) => { let b=""; req.on("data",c=>b+=c); req.on("end",()=>{const id=JSON.parse(b).id; res.writeHead(200, {"content-type":"application/json"}); res.end(JSON.stringify({jsonrpc:"2.0",id,error:{code:-32005,message:"limit exceeded"}}));}); }));
await run("rpc -32603 @200", await serve((req, res) => { let b=""; req.on("data",c=>b+=c); req.on("end",()=>{const id=JSON.parse(b).id; res.writeHead(200, {"content-type":"application/json"}); res.end(JSON.stringify({jsonrpc:"2.0",id,error:{code:-32603,message:"internal error"}}));}); }));
await run("html 200", await serve((req, res) => { res.writeHead(200, {"content-type":"text/html"}); res.end("<html>captive portal</html>"); }));
await run("hang", await serve(() => {}));
for (const s of servers) s.closeAllConnections(), s.close();
