// The examples in examples/ run as documented (offline: the agent example uses the AI SDK's mock model
// when no AI_GATEWAY_API_KEY is set, the MCP example starts its own server).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runNode, type Ran } from "./helpers/process.ts";

function runExample(name: string): Promise<Ran> {
  const file = fileURLToPath(new URL(`../examples/${name}`, import.meta.url));
  const env = { ...process.env };
  delete env.AI_GATEWAY_API_KEY; // the examples fall back to the AI SDK's mock model: no network
  return runNode([file], { env });
}

describe("examples", () => {
  test("ai-agent.ts: Python through run_code, then code mode calling getPrice", async () => {
    const r = await runExample("ai-agent.ts");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /→ run_code .*"language":"python"/);
    assert.match(r.stdout, /→ code_mode /);
    assert.match(r.stdout, /answer: The mean of the first 20 primes is 31\.95; the fruit costs \$4\.05\./);
  });

  test("mcp-client.ts: tools listed, streamed steps, a value, a readable error", async () => {
    const r = await runExample("mcp-client.ts");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^tools: run_code$/m);
    assert.match(r.stdout, /… step 1/);
    assert.match(r.stdout, /✓ ok \(javascript[\s\S]*value: "done"/);
    assert.match(r.stdout, /✓ ok \(python[\s\S]*value: 3\.875/);
    assert.match(r.stdout, /✗ error: runtime: TypeError: /);
  });
});
