// `node scripts/mcp-conformance.ts [--all]`: runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against `serveHttp` in this process, for each revision the suite
// has server scenarios for, and prints one table. Without --all only the scenarios that apply to a
// code-execution server run (MCP_SCENARIOS below; docs/server.md says why the rest do not); the exit
// code is 1 when one of them fails. Slow (a client process per scenario), so not part of `npm test`;
// test/adapters/mcp/conformance.test.ts runs the applicable ones for one revision.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { serveHttp } from "../src/adapters/mcp/http.ts";
import { createSandbox } from "../src/index.ts";

const CLI = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url));

/** The suite's server scenarios that apply to a server whose one tool runs code (the rest call fixture tools, prompts, resources or client features). */
export const MCP_SCENARIOS = [
  "server-initialize",
  "ping",
  "logging-set-level",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-error",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
] as const;

/** The revisions the suite (0.1.16) has server scenarios for; it has none for 2026-07-28 yet. */
export const SUITE_REVISIONS = ["2025-06-18", "2025-11-25"] as const;

export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: number;
}

/** Runs the suite against `url` for one revision; `scenarios` narrows it (one run per scenario). */
export async function runConformance(
  url: string,
  revision: string,
  scenarios?: readonly string[],
): Promise<ScenarioResult[]> {
  const out = mkdtempSync(join(tmpdir(), "wasmcell-mcp-conformance-"));
  try {
    const runs = scenarios?.map((s) => ["--scenario", s]) ?? [[]];
    for (const args of runs) {
      // A failed scenario exits 1; the results are read from the files either way.
      await promisify(execFile)(
        process.execPath,
        [CLI, "server", "--url", url, "--spec-version", revision, "-o", out, ...args],
        { cwd: out, maxBuffer: 16 << 20 },
      ).catch(() => undefined);
    }
    return readdirSync(out)
      .filter((d) => d.startsWith("server-"))
      .map((d) => {
        const checks = JSON.parse(readFileSync(join(out, d, "checks.json"), "utf8")) as { status: string }[];
        return {
          scenario: d.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, ""),
          passed: checks.filter((c) => c.status === "SUCCESS").length,
          failed: checks.filter((c) => c.status === "FAILURE").length,
        };
      })
      .sort((a, b) => a.scenario.localeCompare(b.scenario));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const all = process.argv.includes("--all");
  await using sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  await using server = await serveHttp({ sandbox });
  await server.ready;
  let bad = 0;
  for (const revision of SUITE_REVISIONS) {
    const results = await runConformance(server.url, revision, all ? undefined : MCP_SCENARIOS);
    console.log(`\n${revision}`);
    for (const r of results) {
      const applies = (MCP_SCENARIOS as readonly string[]).includes(r.scenario);
      const ok = r.failed === 0 && r.passed > 0;
      if (applies && !ok) bad++;
      console.log(`  ${ok ? "pass" : "FAIL"}  ${r.scenario}${applies ? "" : " (does not apply)"}`);
    }
  }
  process.exitCode = bad > 0 ? 1 : 0;
}
