// Threat: a caller without the bearer token (or with a wrong one, or guessing it byte by byte) runs
// code on a server that requires one. The 401 must come before anything runs: a host function counts
// every run that reaches the engine.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import { createSandbox } from "../../src/index.ts";

const TOKEN = "0123456789abcdef-correct-token";

function call(url: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "run_code", arguments: { language: "javascript", code: "await mark(); 'ran'" } },
    }),
  });
}

describe("mcp over http: bearer token", () => {
  it("a missing, wrong, truncated or extended token gets 401 and nothing runs", async () => {
    let runs = 0;
    await using sandbox = await createSandbox({ javascript: { hostFunctions: { mark: () => void runs++ } } });
    await using server = await serveHttp({ sandbox, stateless: true, token: TOKEN });
    for (const headers of [
      {},
      { authorization: "Bearer wrong-token-of-some-length" },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `bearer ${TOKEN}` },
      { authorization: TOKEN },
    ]) {
      const res = await call(server.url, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="wasmcell"');
      assert.match(await res.text(), /missing or wrong bearer token/);
    }
    const metrics = await fetch(server.url.replace("/mcp", "/metrics"));
    assert.equal(metrics.status, 401);
    assert.equal(runs, 0);
    const ok = await call(server.url, { authorization: `Bearer ${TOKEN}` });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /ran/);
    assert.equal(runs, 1);
    // Probes stay open (they reveal nothing and a load balancer has no token).
    assert.equal((await fetch(server.url.replace("/mcp", "/healthz"))).status, 200);
  });
});
