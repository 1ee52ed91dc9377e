// `npx -y wasmcell mcp`, the command in the README's Claude Desktop, Cursor and Claude Code configs, as a
// user meets it: the package packed to a tarball, installed into an empty project with nothing else
// (so only what wasmcell's own dependencies pull in is there: no MCP SDK from a devDependency or a peer),
// then started by npx exactly as the config says and driven by an MCP client over stdio.
// npx runs with npm's offline switch, so it resolves wasmcell from the local install, never the
// registry; the install itself may fetch wasmcell's dependencies from the registry (or npm's cache).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ensureBuilt } from "../edge/build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
// The README's command, word for word (the Claude Desktop/Cursor config's "args").
const README_ARGS = ["-y", "wasmcell", "mcp", "--timeout-ms", "10000"];

describe("npx -y wasmcell mcp from a packed tarball in an empty project", { timeout: 180_000 }, () => {
  let dir: string;
  let project: string;
  // The package needs Node >= 22.12: the pinned Node goes first on PATH for npm, npx and the bin's shebang.
  const env: Record<string, string> = {};
  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "wasmcell-npx-"));
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`;
    env.npm_config_update_notifier = "false";
    env.npm_config_fund = "false";
    env.npm_config_audit = "false";
    const npm = (args: string[], cwd: string, extra: Record<string, string> = {}) =>
      execFileSync("npm", args, {
        cwd,
        env: { ...env, ...extra },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 150_000,
      });

    npm(["pack", "--ignore-scripts", "--pack-destination", dir], root);
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote no tarball");
    project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "empty", private: true }));
    npm(["install", "--prefer-offline", join(dir, tarball)], project);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("starts, lists run_code and answers a call", async () => {
    const client = new Client({ name: "wasmcell-npx-test", version: "1.0.0" });
    const transport = new StdioClientTransport({
      command: "npx",
      args: README_ARGS,
      cwd: project,
      env: { ...env, npm_config_offline: "true" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ["run_code"],
        stderr,
      );
      const r = await client.callTool({ name: "run_code", arguments: { language: "javascript", code: "6 * 7" } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.content), /42/);
    } catch (error) {
      throw new Error(`${String(error)}\nserver stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });
});
