// Stateful sessions across replicas: three `wasmcell mcp --http --session --redis` replicas behind
// HAProxy (round-robin, no stickiness) on a real redis-server, 20 clients each with a Python and a
// JavaScript session doing 20 dependent calls, and one replica SIGKILLed a third of the way in. Every
// chain must stay correct: a call that failed (the dead replica's, or one that found the session's
// lock still held by it) is retried, as docs/server.md tells clients to, and resumes the last stored
// snapshot on another replica. Reported: calls, retries, runs replayed (a retry whose first attempt had
// been saved before the reply was lost), time.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  connectClient,
  haproxyAvailable,
  startHaproxy,
  startReplica,
  type Balancer,
  type Replica,
} from "../../helpers/mcp-http.ts";
import { redisAvailable, startRedis, type RedisServer } from "../../helpers/redis.ts";
import { SESSION_KEY, callRetrying, chainStep, chainValue } from "../../helpers/stored-sessions.ts";

const CLIENTS = 20;
const CALLS = 20;

describe("three replicas with --redis behind HAProxy: stateful sessions from any replica", () => {
  let redis: RedisServer;
  let replicas: Replica[];
  let lb: Balancer;
  before(async () => {
    // CI installs both (.ci/run); a missing one is a failure, not a skip.
    assert.ok(haproxyAvailable(), "haproxy is not installed (apt-get install haproxy)");
    assert.ok(redisAvailable(), "redis-server is not installed (apt-get install redis-server)");
    redis = await startRedis();
    process.env.WASMCELL_SESSION_KEY = SESSION_KEY;
    const flags = [
      "--session",
      "--redis",
      redis.url,
      "--session-lease-ms",
      "2000",
      "--session-wait-ms",
      "15000",
      "--timeout-ms",
      "10000",
      "--js-workers",
      "1",
      "--js-max-workers",
      "2",
      "--max-inflight-per-client",
      "64",
    ];
    replicas = await Promise.all([0, 1, 2].map(() => startReplica(flags)));
    lb = await startHaproxy(replicas.map((r) => r.url));
  });
  after(async () => {
    await lb?.close();
    for (const r of replicas ?? []) r.child.kill("SIGKILL");
    await Promise.all((replicas ?? []).map((r) => r.exited));
    await redis?.stop();
  });

  test(
    `${CLIENTS} clients, each a Python and a JavaScript session of ${CALLS} dependent calls, a replica killed: every chain correct`,
    { concurrency: true },
    async (t) => {
      const started = performance.now();
      const clients: Client[] = await Promise.all(
        Array.from({ length: CLIENTS }, (_, c) => connectClient(lb.url, `c${c}`)),
      );
      const total = CLIENTS * CALLS * 2;
      const victim = replicas[1]!;
      let done = 0;
      const stats = { calls: 0, retries: 0, replayed: 0 };
      const chains = async (language: "python" | "javascript") => {
        const wrong: string[] = [];
        await Promise.all(
          clients.map(async (client, c) => {
            let last = { length: 0, sum: 0, runs: 0 };
            for (let i = 0; i < CALLS; i++) {
              const attempt = await callRetrying(client, { language, code: chainStep(language, i) });
              stats.calls++;
              stats.retries += attempt.retries;
              const value = chainValue(attempt.text);
              if (!value || value.length !== i + 1 || value.sum !== (i * (i + 1)) / 2 || value.runs <= last.runs)
                wrong.push(`${language} ${c}/${i}: ${attempt.text}`);
              else last = value;
              // A third of the way in, kill a replica outright: its calls in flight fail, its locks expire.
              if (++done === Math.floor(total / 3)) victim.child.kill("SIGKILL");
            }
            stats.replayed += last.runs - CALLS;
          }),
        );
        assert.deepEqual(wrong, []);
      };
      await Promise.all([
        t.test("Python chains", () => chains("python")),
        t.test("JavaScript chains", () => chains("javascript")),
      ]);
      assert.equal(done, total);
      assert.equal(await victim.exited, null); // killed by the signal
      await Promise.all(clients.map((c) => c.close()));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      // Reported, not asserted (a timing on a shared machine is not a test).
      console.log(
        `# sessions across replicas: ${stats.calls} dependent calls (${CLIENTS} clients) in ${seconds} s, ${stats.retries} retries, ${stats.replayed} runs replayed`,
      );
    },
  );
});
