// How many runs one QuickJS engine (in a worker, or in-process) takes at once: the most
// `javascript.runsPerWorker` may be, defined once with that option (src/options/javascript.ts).
export { MAX_RUNS_PER_WORKER as RUNS_AT_ONCE } from "../../options/index.ts";
