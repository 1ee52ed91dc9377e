// One timing loop for the benches that report p50/p99 of a single async call: warm up, then time
// `runs` calls back to back. Ratios within one run are what these numbers are for.

export interface Row {
  what: string;
  runs: number;
  p50: number;
  p99: number;
}

export async function measure(what: string, runs: number, once: () => Promise<unknown>, warmup = 50): Promise<Row> {
  for (let i = 0; i < Math.min(warmup, runs); i++) await once();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { what, runs, p50: at(0.5), p99: at(0.99) };
}
