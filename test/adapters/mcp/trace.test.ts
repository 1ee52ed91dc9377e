// MCP `_meta.traceparent` into the run: a 2026-07-28 request's trace context becomes the parent of the
// run's span (the spans themselves are the tracing layer's, test/kit/trace.test.ts); a malformed one
// is dropped at the MCP edge and the run starts its own trace.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../../src/adapters/mcp/http.ts";
import { SPANS } from "../../../src/kit/trace.ts";
import { callModern, connectModern } from "../../helpers/mcp-v2.ts";
import { parentOf, recordSpans, type Recorder } from "../../helpers/trace.ts";

describe("MCP _meta.traceparent", () => {
  let rec: Recorder;
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  let client: Client;
  before(async () => {
    rec = recordSpans();
    sandbox = await createSandbox();
    server = await serveHttp({ sandbox });
    // The server warms its engines with runs of its own: they must be over before spans are counted.
    await server.ready;
    client = await connectModern(server.url);
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await sandbox?.close();
    await rec?.close();
  });
  const runs = () => rec.spans().filter((s) => s.name === SPANS.run);

  it("the run's span goes under the request's traceparent", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const spanId = "00f067aa0ba902b7";
    rec.reset();
    const r = await callModern(
      client,
      "run_code",
      { language: "javascript", code: "1 + 1" },
      { traceparent: `00-${traceId}-${spanId}-01` },
    );
    assert.match(r.text, /value: 2/);
    const [run] = runs();
    assert.ok(run, "a run span");
    assert.equal(run.spanContext().traceId, traceId);
    assert.equal(parentOf(run), spanId);
  });

  it("a malformed traceparent is dropped: the run is not under it", async () => {
    rec.reset();
    await callModern(
      client,
      "run_code",
      { language: "javascript", code: "1" },
      { traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" },
    );
    const [run] = runs();
    assert.ok(run, "a run span");
    assert.notEqual(parentOf(run), "00f067aa0ba902b7");
  });
});
