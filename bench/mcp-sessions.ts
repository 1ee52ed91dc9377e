// `npm run bench mcp-sessions`: what a stored MCP session adds to each call, side by side in one run.
// One Python `x += 1` per tools/call over Streamable HTTP on loopback, on a `--session` server that keeps
// its interpreters in-process (the baseline), then on one that stores them after every call in a
// MemorySessionStore, a DiskSessionStore and a RedisSessionStore (a real redis-server on loopback):
// lock, read the record, run, snapshot, write, release. The last row alternates each call between two
// servers sharing Redis, so every call also resumes the snapshot (what a balancer without stickiness
// costs). Ratios within one run are the point.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createSandbox } from "../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../src/adapters/mcp/http.ts";
import { DiskSessionStore, MemorySessionStore } from "../src/stores/index.ts";
import { RedisSessionStore } from "../src/stores/redis.ts";
import type { SessionStore } from "../src/stores/store.ts";
import { connectClient } from "../test/helpers/mcp-http.ts";
import { startRedis } from "../test/helpers/redis.ts";
import type { Row } from "./measure.ts";

const RUNS = Number(process.env.BENCH_MCP_SESSION_RUNS ?? 60);
const WARMUP = 5;

function summary(what: string, times: number[]): Row {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { what, runs: sorted.length, p50: at(0.5), p99: at(0.99) };
}

async function call(client: Client): Promise<void> {
  const r = (await client.callTool({
    name: "run_code",
    arguments: { language: "python", code: "x = globals().get('x', 0) + 1\nx" },
  })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r.content));
}

export async function bench(): Promise<string> {
  const redis = await startRedis();
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-bench-store-"));
  const sandbox = await createSandbox({
    // A sidecar per live interpreter (six: the alternating row's two servers hold one each), so no row's
    // calls wait for the engine to evict another row's session from a shared sidecar.
    python: { pool: 6 },
    sessions: { key: "bench-mcp-sessions-key-0123456789abcdef" },
  });
  const servers: HttpMcpServer[] = [];
  const stores: SessionStore[] = [];
  const rows: Row[] = [];
  try {
    const serve = async (store: SessionStore | undefined) => {
      const server = await serveHttp({ sandbox, session: true, ...(store ? { sessionStore: store } : {}) });
      servers.push(server);
      if (store) stores.push(store);
      return server;
    };
    const plain = async (store: SessionStore | undefined) => {
      const client = await connectClient((await serve(store)).url);
      return () => call(client);
    };
    // Two servers, one Redis: each call goes to the other one, which must resume the last snapshot.
    const alternating = async () => {
      const shared = new RedisSessionStore({ redis: redis.url });
      const [a, b] = [await serve(shared), await serve(shared)];
      const first = await connectClient(a.url, "a");
      const id = (first.transport as StreamableHTTPClientTransport).sessionId!;
      const second = new McpClient({ name: "b", version: "1" });
      await second.connect(new StreamableHTTPClientTransport(new URL(b.url), { sessionId: id }));
      let turn = 0;
      return () => call(turn++ % 2 ? first : second);
    };
    const cases: [string, () => Promise<void>][] = [
      ["in-process session (no store: the baseline)", await plain(undefined)],
      ["stored: MemorySessionStore", await plain(new MemorySessionStore())],
      ["stored: DiskSessionStore", await plain(new DiskSessionStore({ dir }))],
      ["stored: RedisSessionStore", await plain(new RedisSessionStore({ redis: redis.url }))],
      ["stored: Redis, alternating two servers (every call resumes)", await alternating()],
    ];
    // Interleaved, one call of each case per round: a machine whose load drifts during the run
    // (other work on it) shifts every row alike instead of whichever row ran at the time.
    const times = cases.map(() => [] as number[]);
    for (let round = -WARMUP; round < RUNS; round++) {
      for (const [c, [, once]] of cases.entries()) {
        const t = performance.now();
        await once();
        if (round >= 0) times[c]!.push(performance.now() - t);
      }
    }
    for (const [c, [what]] of cases.entries()) rows.push(summary(what, times[c]!));
  } finally {
    for (const s of servers) await s.close();
    for (const s of stores) await s.close();
    await sandbox.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = rows[0]!;
  const lines = rows.map(
    (r) =>
      `| ${r.what} | ${r.runs} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r === base ? "—" : `+${(r.p50 - base.p50).toFixed(1)}`} |`,
  );
  return [
    "## Stored MCP sessions: what each call adds",
    "",
    "One Python `x += 1` per `tools/call` over Streamable HTTP on loopback, one client per row, the rows' calls interleaved (ms).",
    "",
    "| server | calls | p50 | p99 | p50 added |",
    "|---|---|---|---|---|",
    ...lines,
    "",
  ].join("\n");
}
