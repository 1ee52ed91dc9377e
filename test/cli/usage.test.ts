// `wasmcell --help`, `wasmcell <command> --help` and `wasmcell help <command>`: every command answers
// with its part of the one help text (src/cli/usage.ts), exit 0, before any flag is parsed.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.ts";
import { asksForHelp, commandHelp, COMMANDS, HELP } from "../../src/cli/usage.ts";
import { runNode } from "../helpers/process.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await main(args, { stdout, stderr, stdin: new PassThrough() });
  return { code, stdout: out, stderr: err };
}

describe("wasmcell help", () => {
  for (const command of COMMANDS) {
    test(`${command} --help, ${command} -h and help ${command} print ${command}'s help`, async () => {
      const expected = commandHelp(command);
      assert.match(expected, new RegExp(`^  wasmcell ${command}\\b`, "m"));
      for (const args of [
        [command, "--help"],
        [command, "-h"],
        ["help", command],
        [command, "--json", "--help"],
      ]) {
        const r = await cli(args);
        assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
        assert.equal(r.stdout, expected, args.join(" "));
        assert.equal(r.stderr, "");
      }
    });
  }

  test("a command's help is cut from the whole help: every line of it is a line of HELP", () => {
    const all = new Set(HELP.split("\n"));
    for (const command of COMMANDS) {
      for (const line of commandHelp(command).split("\n")) assert.ok(all.has(line), `${command}: ${line}`);
    }
    // Commands with options get their whole options section, up to the blank line that ends it.
    assert.match(commandHelp("run"), /\n {2}--lang js\|ts\|python[\s\S]*\n {2}--verbose /);
    assert.match(commandHelp("mcp"), /\nmcp options:\n {2}--http /);
    assert.doesNotMatch(commandHelp("run"), /mcp options:|--redis URL/);
    assert.match(commandHelp("doctor"), /wasmcell doctor \[--json\][\s\S]*Exit codes:/);
  });

  test("--help, -h and help print the whole help, exit 0; no command prints it and exits 2", async () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const r = await cli(args);
      assert.equal(r.code, 0);
      assert.equal(r.stdout, HELP);
    }
    const none = await cli([]);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, HELP);
  });

  test("help for an unknown command is bad usage", async () => {
    const r = await cli(["help", "frobnicate"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "frobnicate"; try run, setup, doctor, mcp or worker/);
  });

  test("--help after -- or inside an option's value is not a request for help", () => {
    assert.equal(asksForHelp(["-e", "1", "--", "--help"]), false);
    assert.equal(asksForHelp(["--allow=--help"]), false);
    assert.equal(asksForHelp(["--http", "--help"]), true);
  });

  test("`wasmcell run --help` as a process: exit 0, the run help on stdout", async () => {
    const r = await runNode([MAIN, "run", "--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, commandHelp("run"));
    // Without the help check, the same flag is still an unknown option to a parser that sees it.
    const bad = await runNode([MAIN, "run", "--helpx"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown option '--helpx'/);
  });
});
