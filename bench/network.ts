// The cost of one allowed request per tier against Node's own fetch to the same loopback server, in
// the same process: the gate alone (policy + pinned connection), a JavaScript run that fetches vs one
// that does not, a Pyodide run that calls urlopen vs one that does not, a native python3 run that
// calls urlopen (and `requests`) through the host proxy vs one that does not.
import { createServer } from "node:http";
import { Deadline } from "../src/kit/deadline.ts";
import { RunNetwork } from "../src/network/run-network.ts";
import { createSandbox, type RunRequest } from "../src/index.ts";
import { resolveOptions } from "../src/options/index.ts";
import { measure, type Row } from "./measure.ts";

/** Network rows warm up with 20 calls (each Pyodide call costs tens of ms). */
const measureNet = (what: string, runs: number, once: () => Promise<unknown>): Promise<Row> =>
  measure(what, runs, once, 20);

export async function bench(): Promise<string> {
  const server = createServer((_req, res) => res.end("hello"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/`;
  const network = { allow: [`127.0.0.1:${port}`], maxRequests: 100_000 };
  await using sandbox = await createSandbox({ python: { pool: 1 }, network });
  const policy = resolveOptions({ network }).network!;
  const gate = new RunNetwork(policy, { engine: "quickjs", deadline: new Deadline(3_600_000) });
  const run = async (request: RunRequest) => {
    const r = await sandbox.run(request);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
  };
  const rows: Row[] = [];
  try {
    rows.push(await measureNet("Node fetch (baseline, keep-alive)", 300, async () => (await fetch(url)).text()));
    rows.push(await measureNet("gate: RunNetwork.fetchAll", 300, () => gate.fetchAll({ url })));
    rows.push(await measureNet("quickjs run without fetch", 300, () => run({ language: "javascript", code: "1" })));
    rows.push(
      await measureNet("quickjs run with one fetch", 300, () =>
        run({ language: "javascript", code: `await (await fetch(${JSON.stringify(url)})).text()` }),
      ),
    );
    rows.push(await measureNet("pyodide run without urlopen", 40, () => run({ language: "python", code: "1" })));
    rows.push(
      await measureNet("pyodide run with one urlopen", 40, () =>
        run({
          language: "python",
          code: `import urllib.request\nurllib.request.urlopen(${JSON.stringify(url)}).read()`,
        }),
      ),
    );
    const native = (code: string) => run({ language: "python", engine: "native", code });
    rows.push(await measureNet("native run without a request", 40, () => native("1")));
    // The import alone: the difference to the next row is the bridge, the proxy and the request.
    rows.push(await measureNet("native run importing urllib.request only", 40, () => native("import urllib.request")));
    rows.push(
      await measureNet("native run with one urlopen (host proxy)", 40, () =>
        native(`import urllib.request\nurllib.request.urlopen(${JSON.stringify(url)}).read()`),
      ),
    );
    rows.push(
      await measureNet("native run with one requests.get (host proxy)", 40, () =>
        native(`import requests\nrequests.get(${JSON.stringify(url)}).text`),
      ),
    );
  } finally {
    gate.close();
    server.close();
  }
  return [
    "## Network (one allowed request to a loopback server)",
    "",
    "| what | runs | p50 ms | p99 ms |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.what} | ${r.runs} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`),
  ].join("\n");
}
