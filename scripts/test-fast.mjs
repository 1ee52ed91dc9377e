/* global process, console, URL */
// `npm run test:fast`: the suite minus the files that take most of its time, for the loop while working.
// `npm test` (and CI) still runs everything; this list only says what to leave out while iterating.
// Each entry is a test file (or folder) with why it is slow: seconds alone on a 2-core machine.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SLOW = new Map([
  ["test/security/worker-kill-leak.test.ts", "~58 s: hundreds of terminated worker threads"],
  ["test/node-versions.test.ts", "~34 s: the README examples on Node 22 and 24"],
  ["test/security/cross-run-pyodide-soak.test.ts", "~32 s: a soak of stateless Python runs"],
  ["test/security/cross-run-soak.test.ts", "a soak of stateless JavaScript runs"],
  [
    "test/engines/sessions/data-session.soak.test.ts",
    "~5 min: 1,000 sessions evicted and resumed, 2,000 fork/run/close cycles",
  ],
  ["test/security/cpu-loop.test.ts", "~21 s: CPU-bound loops past their deadlines"],
  ["test/security/abort-recovery.test.ts", "~19 s: aborts on every engine, each followed by recovery"],
  ["test/cli/main.test.ts", "~18 s: the CLI as a child process, command by command"],
  ["test/adapters/mcp/server.test.ts", "~17 s: the MCP server over stdio"],
  ["test/setup/setup.test.ts", "~14 s: setup from the lock"],
  ["test/adapters/mcp/load.test.ts", "~11 s: the MCP HTTP server under load"],
  ["test/adapters/mcp/scale-out-sessions.test.ts", "~125 s: three replicas on Redis, 400 dependent session calls"],
  ["test/adapters/mcp/stored-sessions.test.ts", "~50 s: servers killed and restarted, two replicas on Redis"],
  ["test/edge", "deno, bun, workerd, edge-runtime and Chromium, each started as a process"],
]);

const root = fileURLToPath(new URL("..", import.meta.url));
/** @type {string[]} */
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith(".test.ts")) files.push(relative(root, path));
  }
})(join(root, "test"));

/** @param {string} file */
const slow = (file) => [...SLOW.keys()].some((s) => file === s || file.startsWith(`${s}/`));
const fast = files.filter((f) => !slow(f));
console.log(
  `test:fast: ${fast.length} of ${files.length} test files (left out: ${files.length - fast.length}, see scripts/test-fast.mjs)`,
);
// A test that awaits an event nobody sends fails after 15 minutes instead of hanging the run forever.
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=1", "--test-timeout=900000", ...fast], {
  cwd: root,
  stdio: "inherit",
});
process.exit(r.status ?? 1);
