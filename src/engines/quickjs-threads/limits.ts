// How many runs one QuickJS engine (in a worker, or in-process) takes at once. The engine keeps this
// many warm cells (runtime + service realm, src/engines/quickjs/modules.ts); admitting more would make
// each extra run build a runtime from scratch, which is the throughput cliff bounded admission removes.
export const RUNS_AT_ONCE = 8;
