// The worker's counters in the Prometheus text format. Written here rather than reusing the MCP
// server's Metrics (src/adapters/mcp/metrics.ts): that class names MCP series and gauges; this one
// counts jobs, two latencies and the queue's depth. Label values come from closed sets (outcomes are
// `ok`, error kinds, `host`, `deferred_*`; states are BullMQ's) except `tenant`, which appears only for
// the tenants the worker was configured with (a job cannot add a series by naming a tenant).

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

class Histogram {
  readonly counts = BUCKETS.map(() => 0);
  count = 0;
  sum = 0;
  observe(seconds: number): void {
    this.count++;
    this.sum += seconds;
    BUCKETS.forEach((le, i) => {
      if (seconds <= le) this.counts[i]!++;
    });
  }
  render(name: string, out: string[]): void {
    BUCKETS.forEach((le, i) => out.push(`${name}_bucket{le="${le}"} ${this.counts[i]}`));
    out.push(`${name}_bucket{le="+Inf"} ${this.count}`, `${name}_sum ${this.sum}`, `${name}_count ${this.count}`);
  }
}

export class WorkerMetrics {
  readonly #jobs = new Map<string, number>();
  readonly #running = new Map<string, number>();
  readonly wait = new Histogram();
  readonly run = new Histogram();
  active = 0;

  job(outcome: string): void {
    this.#jobs.set(outcome, (this.#jobs.get(outcome) ?? 0) + 1);
  }

  /** A configured tenant's runs in flight on this worker (+1 at start, -1 at end). */
  tenant(tenant: string, delta: number): void {
    this.#running.set(tenant, (this.#running.get(tenant) ?? 0) + delta);
  }

  render(depth: Record<string, number>, draining: boolean): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family(
      "wasmcell_queue_jobs_total",
      "counter",
      "Jobs this worker handled, by outcome (ok, an error kind, host, deferred_concurrency, deferred_rate).",
    );
    for (const [o, n] of this.#jobs) out.push(`wasmcell_queue_jobs_total{outcome="${o}"} ${n}`);
    family("wasmcell_queue_wait_seconds", "histogram", "Time from enqueue to a worker taking the job.");
    this.wait.render("wasmcell_queue_wait_seconds", out);
    family("wasmcell_queue_run_seconds", "histogram", "Time a worker spent on a job (sandbox.run and the reply).");
    this.run.render("wasmcell_queue_run_seconds", out);
    family("wasmcell_queue_depth", "gauge", "Jobs in the queue by state (all workers' view, read from Redis).");
    for (const [state, n] of Object.entries(depth)) out.push(`wasmcell_queue_depth{state="${state}"} ${n}`);
    family("wasmcell_queue_active_jobs", "gauge", "Jobs running on this worker.");
    out.push(`wasmcell_queue_active_jobs ${this.active}`);
    family("wasmcell_queue_tenant_running", "gauge", "Runs of a capped tenant in flight on this worker.");
    for (const [t, n] of this.#running) out.push(`wasmcell_queue_tenant_running{tenant="${t}"} ${n}`);
    family("wasmcell_queue_draining", "gauge", "1 while the worker drains after SIGTERM.");
    out.push(`wasmcell_queue_draining ${draining ? 1 : 0}`);
    return `${out.join("\n")}\n`;
  }
}
