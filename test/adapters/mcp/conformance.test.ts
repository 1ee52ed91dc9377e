// The official MCP conformance suite's scenarios that apply to a code-execution server, against
// serveHttp, at 2025-11-25 (scripts/mcp-conformance.ts runs both revisions the suite has, and --all).
import assert from "node:assert/strict";
import { test } from "node:test";
import { serveHttp } from "../../../src/adapters/mcp/http.ts";
import { createSandbox } from "../../../src/index.ts";
import { MCP_SCENARIOS, runConformance } from "../../../scripts/mcp-conformance.ts";

test("every applicable conformance scenario passes (2025-11-25)", async () => {
  await using sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  await using server = await serveHttp({ sandbox });
  await server.ready;
  const results = await runConformance(server.url, "2025-11-25", MCP_SCENARIOS);
  assert.deepEqual(
    results.map((r) => r.scenario),
    [...MCP_SCENARIOS].sort(),
  );
  for (const r of results) assert.ok(r.passed > 0 && r.failed === 0, `${r.scenario}: ${JSON.stringify(r)}`);
});
