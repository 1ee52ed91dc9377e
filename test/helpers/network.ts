// Shared set-up for the network security tests: two loopback HTTP servers (one the allowlist names,
// one it does not) and a sandbox running JavaScript, Pyodide and native python3 under the full seal. Every test ends
// by asking the second server what it saw: nothing.
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { NetworkOptions } from "../../src/options/index.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import { startHttpServer, type TestServer } from "./http.ts";
import { FULL } from "./pyodide.ts";

export interface NetworkWorld {
  allowed: TestServer;
  forbidden: TestServer;
  sandbox: Sandbox;
  events: SandboxEvent[];
  /** Runs JavaScript or Python and returns its value (the run must succeed). */
  js(code: string): Promise<unknown>;
  py(code: string): Promise<unknown>;
  /** Native python3 in the jail, through the host proxy (HTTP(S)_PROXY set by the driver). */
  native(code: string): Promise<unknown>;
  close(): Promise<void>;
}

export async function networkWorld(network: (allowed: TestServer) => NetworkOptions): Promise<NetworkWorld> {
  const allowed = await startHttpServer();
  const forbidden = await startHttpServer();
  const events: SandboxEvent[] = [];
  const sandbox = await createSandbox({
    python: { pool: 1 },
    seal: FULL,
    network: network(allowed),
    onEvent: (e) => events.push(e),
  });
  const value = async (language: "javascript" | "python", code: string, engine?: "native") => {
    const r = await sandbox.run({ language, code, ...(engine ? { engine } : {}) });
    if (!r.ok) throw new Error(`${engine ?? language} run failed: ${JSON.stringify(r.error)}`);
    return r.value;
  };
  return {
    allowed,
    forbidden,
    sandbox,
    events,
    js: (code) => value("javascript", code),
    py: (code) => value("python", code),
    native: (code) => value("python", code, "native"),
    close: async () => {
      await sandbox.close();
      await allowed.close();
      await forbidden.close();
    },
  };
}

/** JavaScript: fetch each URL, collect "reached" or the error message. */
export const jsProbe = (urls: string[]) => `
const out = [];
for (const url of ${JSON.stringify(urls)}) {
  try { const r = await fetch(url); await r.text(); out.push("reached " + r.status); } catch (e) { out.push(e.message); }
}
out`;

/** Python: urlopen each URL, collect "reached" or the reason. */
export const pyProbe = (urls: string[]) => `
import urllib.request, urllib.error
out = []
for url in ${JSON.stringify(urls)}:
    try:
        r = urllib.request.urlopen(url)
        r.read()
        out.append("reached %d" % r.status)
    except urllib.error.HTTPError as e:
        out.append("reached %d" % e.code)
    except urllib.error.URLError as e:
        out.append(str(e.reason).split("] ", 1)[-1])
out`;

/** Python: `pyodide.http.pyfetch` each URL (top-level await), collect "reached" or the refusal. */
export const pyFetchProbe = (urls: string[]) => `
from pyodide.http import pyfetch
out = []
for url in ${JSON.stringify(urls)}:
    try:
        r = await pyfetch(url)
        await r.bytes()
        out.append("reached %d" % r.status)
    except OSError as e:
        out.append(e.strerror or str(e))
out`;
/**
 * Native python3: the same as pyProbe, where a refusal is the host proxy's 403 (its reason phrase is
 * the verdict) rather than an exception of the bridge.
 */
export const nativeProbe = (urls: string[]) =>
  pyProbe(urls).replace(
    'out.append("reached %d" % e.code)',
    'out.append(e.reason if str(e.reason).startswith("network: ") else "reached %d" % e.code)',
  );
