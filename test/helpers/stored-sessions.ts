// What the stored-session tests share: a dependent chain of calls on one session (each call reads what
// the last one wrote), and calls retried the way a client of replicas must.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { resultText } from "./mcp-http.ts";

/** A key both a test and the servers it starts use (WASMCELL_SESSION_KEY), at least 32 characters. */
export const SESSION_KEY = "stored-sessions-test-key-0123456789abcdef";

/**
 * Step `i` of a chain: keeps a list and appends `i` only when the list holds steps 0..i-1, so a call
 * retried after its first attempt was saved changes nothing; `runs` counts every execution (a retry
 * whose first attempt had been saved shows as a run more than there were steps). The value is
 * `length:sum:runs`: after step i, `i+1 : i(i+1)/2 : runs`.
 */
export function chainStep(language: "python" | "javascript", i: number): string {
  return language === "python"
    ? `if "log" not in globals(): log = []\nruns = globals().get("runs", 0) + 1\nif len(log) == ${i}: log.append(${i})\nf"{len(log)}:{sum(log)}:{runs}"`
    : `globalThis.log ??= []; globalThis.runs = (globalThis.runs ?? 0) + 1; if (log.length === ${i}) log.push(${i}); \`\${log.length}:\${log.reduce((a, b) => a + b, 0)}:\${runs}\``;
}

/** Parses a chain step's value; undefined when the text is not a successful `length:sum:runs`. */
export function chainValue(text: string): { length: number; sum: number; runs: number } | undefined {
  const m = /\nvalue: ["']?(\d+):(\d+):(\d+)["']?$/.exec(text);
  if (!text.startsWith("ok") || !m) return undefined;
  return { length: Number(m[1]), sum: Number(m[2]), runs: Number(m[3]) };
}

export interface Attempted {
  text: string;
  /** Attempts that failed before the one that answered: thrown (a dead replica) or a busy session. */
  retries: number;
}

/**
 * Calls run_code, retrying (up to `attempts` times, with backoff) when the call fails outright — the
 * replica died, the balancer answered 502/503 — or the session was busy or its lock lost: what the
 * documentation tells clients of replicas to retry. Any other result is returned as it is.
 */
export async function callRetrying(client: Client, args: Record<string, unknown>, attempts = 8): Promise<Attempted> {
  for (let retries = 0; ; retries++) {
    let text: string | undefined;
    try {
      text = resultText(await client.callTool({ name: "run_code", arguments: args }));
    } catch (error) {
      if (retries + 1 >= attempts) throw error;
    }
    if (text !== undefined && !/session is busy|lock ran out/.test(text)) return { text, retries };
    if (retries + 1 >= attempts) return { text: text ?? "", retries };
    await new Promise((r) => setTimeout(r, 200 * (retries + 1)));
  }
}
