// Threat: an allowed server sends answers no one wrote a test for. Fuzz of the gate (in-process, a
// few thousand generated answers) and of the native tier's proxy (fewer, through its socket), from
// a loopback server: every request settles (an answer with a final status, or an Error naming the
// network), the process stays up (an uncaught throw fails this file), and when it is over no socket
// is open on either end. Bounded in count and time; the seed is fixed, so a failure names its case.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Deadline } from "../../src/kit/deadline.ts";
import { RunNetwork } from "../../src/network/run-network.ts";
import { NetworkProxy } from "../../src/network/proxy.ts";
import { resolveOptions } from "../../src/options/index.ts";
import { fuzzAnswerFor } from "../helpers/fuzz-answers.ts";
import { startRawServer, type RawServer } from "../helpers/raw-http.ts";

const SEED = 27;
const GATE_CASES = 3000;
const PROXY_CASES = 400;
const TIMEOUT_MS = 400;
/** Far past the request's own timeout: a request still pending then would never settle. */
const HANG_MS = TIMEOUT_MS + 3_000;

let server: RawServer;
let dir: string;
before(async () => {
  server = await startRawServer(fuzzAnswerFor(SEED));
  dir = mkdtempSync(join(tmpdir(), "wasmcell-fuzz-test-"));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const policy = () =>
  resolveOptions({
    network: {
      allow: [`127.0.0.1:${server.port}`],
      timeoutMs: TIMEOUT_MS,
      maxRequests: 100_000,
      maxResponseBytes: 30_000,
      maxTotalBytes: 2 ** 40,
    },
  }).network!;

/** Runs `work(i)` for every case, `width` at a time; the cases that did not settle within HANG_MS. */
async function each(cases: number, width: number, work: (i: number) => Promise<string | undefined>) {
  const problems: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < cases) {
      const i = next++;
      let timer: NodeJS.Timeout | undefined;
      const hang = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("did not settle"), HANG_MS)));
      const problem = await Promise.race([work(i), hang]);
      clearTimeout(timer);
      if (problem) problems.push(`case ${i}: ${problem}`);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return problems;
}

const tcpHandles = () => process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;

/** Waits (bounded) for the host's TCP handles to come back to `count`. */
async function handlesBackTo(count: number): Promise<void> {
  for (let i = 0; i < 200 && tcpHandles() > count; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(tcpHandles(), count, "TCP handles left open in the host");
}

/** An error a guest may see: an Error whose message says it is the network's. */
function badError(e: unknown): string | undefined {
  if (!(e instanceof Error)) return `rejected with a non-Error ${String(e)}`;
  return /^network: /.test(e.message) ? undefined : `rejected with "${e.message}"`;
}

describe("fuzzed answers", () => {
  it(`the gate settles ${GATE_CASES} generated answers and leaves nothing open`, async () => {
    const baseline = tcpHandles();
    const p = policy();
    let answered = 0;
    const problems = await each(GATE_CASES, 32, async (i) => {
      const net = new RunNetwork(p, { engine: "quickjs", deadline: new Deadline(60_000) });
      const url = `${server.origin}/f/${i}`;
      try {
        // Both ways a guest reads: whole (the Python bridge), or streamed and sometimes cancelled.
        if (i % 3 !== 0) {
          const r = await net.fetchAll({ url });
          if (r.status < 200 || r.status > 599) return `status ${r.status} passed on`;
        } else {
          const r = await net.fetch({ url, redirect: i % 2 ? "manual" : "follow" });
          if (r.status < 200 || r.status > 599) return `status ${r.status} passed on`;
          if (i % 6 === 0) r.body.cancel();
          else while (await r.body.read());
        }
        answered++;
        return undefined;
      } catch (e) {
        return badError(e);
      } finally {
        net.close();
      }
    });
    assert.deepEqual(problems, []);
    assert.ok(answered > 0 && answered < GATE_CASES, `answered ${answered}: the cases cover both outcomes`);
    await server.drained();
    await handlesBackTo(baseline);
  });

  it(`the proxy answers ${PROXY_CASES} generated answers and the host stays up`, async () => {
    const baseline = tcpHandles();
    const net = new RunNetwork(policy(), { engine: "native", deadline: new Deadline(600_000) });
    const proxy = await NetworkProxy.listen(join(dir, "fuzz.sock"));
    proxy.attach({ network: net, engine: "native", emit: () => undefined });
    const problems = await each(
      PROXY_CASES,
      8,
      (i) =>
        new Promise<string | undefined>((resolve) => {
          const req = http.request({ socketPath: proxy.path, path: `${server.origin}/f/${i}` }, (res) => {
            const status = res.statusCode ?? 0;
            res.resume();
            res.on("end", () => resolve(status >= 200 && status <= 599 ? undefined : `status ${status} passed on`));
            // A cut after the head is what a broken answer looks like to the jail.
            res.on("error", () => resolve(undefined));
          });
          req.on("error", () => resolve(undefined));
          req.end();
        }),
    );
    assert.deepEqual(problems, []);
    net.close();
    await proxy.close();
    await server.drained();
    await handlesBackTo(baseline);
  });
});
