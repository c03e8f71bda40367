/**
 * lib/tracing.ts's chain RPC spans (test/traces.test.ts covers requests, statements and signing
 * end to end): a viem client on tracedHttp, against a JSON-RPC endpoint of the test's whose URL
 * carries an API key, makes one span per call under the active span, named by the method, with the
 * provider's host and never the URL's path. Off, no span is made.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as api from "@opentelemetry/api";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { createPublicClient } from "viem";
import { mainnet } from "viem/chains";
import { afterAll, beforeAll, expect, it } from "vitest";
import { enableTracing, tracedHttp } from "./tracing";

let rpc: http.Server;
let url: string;

beforeAll(async () => {
  rpc = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const { id } = JSON.parse(body) as { id: number };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result: "0x1" }));
    });
  });
  await new Promise<void>((resolve) => rpc.listen(0, "localhost", resolve));
  url = `http://localhost:${(rpc.address() as AddressInfo).port}/v3/secret-api-key`;
});
afterAll(() => new Promise((resolve) => rpc.close(resolve)));

it("makes no span while traces are off, then one per RPC call under the active span", async () => {
  const client = createPublicClient({ chain: mainnet, transport: tracedHttp(url, { timeout: 5_000, retryCount: 0 }) });
  expect(await client.getChainId()).toBe(1);

  const exported = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exported)] });
  provider.register();
  const tracer = api.trace.getTracer("test");
  enableTracing({ api, tracer });
  await tracer.startActiveSpan("request", async (parent) => {
    expect(await client.getChainId()).toBe(1);
    parent.end();
  });
  const spans = exported.getFinishedSpans();
  const call = spans.find((span) => span.name === "rpc eth_chainId");
  const parent = spans.find((span) => span.name === "request");
  expect(spans).toHaveLength(2);
  expect(call?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
  expect(call?.attributes).toEqual({ "rpc.system": "jsonrpc", "rpc.method": "eth_chainId", "server.address": new URL(url).host });
  expect(JSON.stringify(call?.attributes)).not.toContain("secret-api-key");
  await provider.shutdown();
});
