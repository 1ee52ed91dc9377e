// The HTTP server's counters in the Prometheus text exposition format (version 0.0.4), written by hand:
// a dozen series need no client library. Label values come from closed sets (languages, error kinds,
// refusal reasons) chosen by the host, never from request data, so a client cannot blow up the series.

/** Upper bounds of the call latency histogram, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What a finished call ended as: `ok`, a guest error kind, `rejected` (bad input, a host refusal). */
export type CallOutcome = string;

export interface Gauges {
  sessions: number;
  inflight: number;
  queued: number;
  running: number;
  draining: boolean;
}

export class Metrics {
  readonly #calls = new Map<string, number>();
  readonly #refusals = new Map<string, number>();
  readonly #buckets = BUCKETS.map(() => 0);
  #count = 0;
  #sum = 0;
  /** `restart` events from the sandbox's event channel: a process, worker or module was replaced. */
  restarts = 0;

  call(language: string, outcome: CallOutcome, seconds: number): void {
    const key = `language="${language}",outcome="${outcome}"`;
    this.#calls.set(key, (this.#calls.get(key) ?? 0) + 1);
    this.#count++;
    this.#sum += seconds;
    BUCKETS.forEach((le, i) => {
      if (seconds <= le) this.#buckets[i]!++;
    });
  }

  refused(reason: string): void {
    this.#refusals.set(reason, (this.#refusals.get(reason) ?? 0) + 1);
  }

  render(gauges: Gauges, expiredSessions: number): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string) =>
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family(
      "wasmcell_mcp_calls_total",
      "counter",
      "run_code calls finished, by language and outcome (ok or error kind).",
    );
    for (const [labels, n] of this.#calls) lines.push(`wasmcell_mcp_calls_total{${labels}} ${n}`);
    family("wasmcell_mcp_call_duration_seconds", "histogram", "Time from admission to result, queueing included.");
    BUCKETS.forEach((le, i) => lines.push(`wasmcell_mcp_call_duration_seconds_bucket{le="${le}"} ${this.#buckets[i]}`));
    lines.push(`wasmcell_mcp_call_duration_seconds_bucket{le="+Inf"} ${this.#count}`);
    lines.push(`wasmcell_mcp_call_duration_seconds_sum ${this.#sum}`);
    lines.push(`wasmcell_mcp_call_duration_seconds_count ${this.#count}`);
    family("wasmcell_mcp_refusals_total", "counter", "Requests refused by admission (503), by reason.");
    for (const [reason, n] of this.#refusals) lines.push(`wasmcell_mcp_refusals_total{reason="${reason}"} ${n}`);
    family(
      "wasmcell_mcp_engine_restarts_total",
      "counter",
      "Engine restarts the sandbox reported (a sidecar, jail, worker thread or module replaced); 0 unless serveHttp was given the sandbox's EventTap.",
    );
    lines.push(`wasmcell_mcp_engine_restarts_total ${this.restarts}`);
    family("wasmcell_mcp_sessions_expired_total", "counter", "Sessions closed after idling past the TTL.");
    lines.push(`wasmcell_mcp_sessions_expired_total ${expiredSessions}`);
    const gauge = (name: string, help: string, value: number) => {
      family(name, "gauge", help);
      lines.push(`${name} ${value}`);
    };
    gauge("wasmcell_mcp_sessions", "Open MCP sessions (0 in stateless mode).", gauges.sessions);
    gauge("wasmcell_mcp_inflight_calls", "Tool calls admitted and not finished (queued or running).", gauges.inflight);
    gauge("wasmcell_mcp_queue_depth", "Tool calls waiting for an engine slot.", gauges.queued);
    gauge("wasmcell_mcp_running_calls", "Tool calls running in an engine.", gauges.running);
    gauge("wasmcell_mcp_draining", "1 while the server drains after SIGTERM.", gauges.draining ? 1 : 0);
    return `${lines.join("\n")}\n`;
  }
}
