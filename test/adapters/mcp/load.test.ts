// Load on one `wasmcell mcp --http` process, the way many agents share a host: 50 official MCP clients
// at once, one call in five a CPU loop that runs into the server's 300 ms deadline. Every benign call
// must come back correct, no session may be lost and no client may see an error; a client past the
// caps gets the documented 503 refusal and nobody else notices; malformed bodies sent in the middle of
// it get 4xx. Bounded: 1,000 calls (200 of them 300 ms loops), and the whole test has a time limit
// (no timing is asserted: the bench measures it, `npm run bench server`).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { BENIGN, HOSTILE, connectClient, resultText, startReplica, type Replica } from "../../helpers/mcp-http.ts";

const CLIENTS = 50;
const CALLS = 20;
/** Generous for a loaded 2-core machine; the work is bounded by the call count, this only ends a hang. */
const TEST_TIMEOUT_MS = 10 * 60_000;

describe("wasmcell mcp --http under load", () => {
  let server: Replica;
  before(async () => {
    server = await startReplica([
      "--timeout-ms",
      "300",
      "--max-sessions",
      String(CLIENTS + 1),
      "--max-inflight-per-client",
      "4",
    ]);
  });
  after(async () => {
    server.child.kill("SIGTERM");
    assert.equal(await server.exited, 0, server.stderr());
  });

  test(
    `${CLIENTS} clients × ${CALLS} calls, one in five hostile: every benign call correct, no client error`,
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const clients = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => connectClient(server.url, `c${c}`)));
      const failures: string[] = [];
      let benign = 0;
      let hostile = 0;
      const junk = async () => {
        // Mid-load: truncated JSON, 5 MB of junk and 100,000-deep nesting get 4xx; the load carries on.
        const bodies = [
          '{"jsonrpc":"2.0","id":1,"meth',
          "\u0001junk".repeat(1_000_000),
          "[".repeat(100_000) + "]".repeat(100_000),
        ];
        for (const body of bodies) {
          const res = await fetch(server.url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body,
          });
          assert.match(String(res.status), /^4\d\d$/);
          await res.arrayBuffer();
        }
      };
      await Promise.all([
        junk(),
        ...clients.map(async (client: Client, c) => {
          for (let i = 0; i < CALLS; i++) {
            const isHostile = (c + i) % 5 === 0;
            const n = c * 1000 + i;
            try {
              const text = resultText(
                await client.callTool({
                  name: "run_code",
                  arguments: { language: "javascript", code: isHostile ? HOSTILE : BENIGN(n) },
                }),
              );
              if (isHostile) {
                hostile++;
                if (!/^error: timeout/.test(text)) failures.push(`client ${c} call ${i} (hostile): ${text}`);
              } else {
                benign++;
                if (!text.endsWith(`value: ${n * 7 + 1}`)) failures.push(`client ${c} call ${i}: ${text}`);
              }
            } catch (error) {
              failures.push(`client ${c} call ${i}: ${String(error)}`);
            }
          }
        }),
      ]);
      assert.deepEqual(failures, []);
      assert.equal(benign + hostile, CLIENTS * CALLS);
      assert.equal(hostile, (CLIENTS * CALLS) / 5);
      // No session was lost: every client still works.
      const again = await Promise.all(
        clients.map((client) =>
          client.callTool({ name: "run_code", arguments: { language: "javascript", code: "'still here'" } }),
        ),
      );
      for (const r of again) assert.match(resultText(r), /still here/);

      // Past the caps: the 52nd session is refused with 503 + reason, and so is a 5th concurrent call of
      // one client; the others carry on untouched.
      const extra = await connectClient(server.url, "extra");
      await assert.rejects(connectClient(server.url, "one too many"), (e: Error & { code?: number }) => {
        assert.equal(e.code, 503);
        assert.match(e.message, /"reason":"max-sessions"/);
        return true;
      });
      const burst = await Promise.allSettled(
        Array.from({ length: 6 }, () =>
          extra.callTool({
            name: "run_code",
            arguments: { language: "javascript", code: "await new Promise((r) => setTimeout(r, 100)); 'b'" },
          }),
        ),
      );
      const refused = burst.filter((b) => b.status === "rejected");
      assert.equal(refused.length, 2);
      for (const b of burst) if (b.status === "fulfilled") assert.match(resultText(b.value), /value: "b"$/);
      for (const r of refused) {
        const e = r.reason as Error & { code?: number };
        assert.equal(e.code, 503);
        assert.match(e.message, /"reason":"max-inflight-per-client"/);
      }
      assert.match(
        resultText(
          await clients[0]!.callTool({ name: "run_code", arguments: { language: "javascript", code: "1+1" } }),
        ),
        /value: 2/,
      );
      const metrics = await (await fetch(server.url.replace("/mcp", "/metrics"))).text();
      assert.match(metrics, /^wasmcell_mcp_sessions 51$/m);
      assert.match(
        metrics,
        new RegExp(`^wasmcell_mcp_calls_total\\{language="javascript",outcome="timeout"\\} ${hostile}$`, "m"),
      );
      await Promise.all([...clients, extra].map((c) => c.close()));
    },
  );
});
