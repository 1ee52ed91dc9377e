// The command-line parser: bash's word splitting for one simple command, and a refusal (never a
// different meaning) for every construct that needs a real shell.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { routeOutput } from "../../../src/adapters/ai/commands.ts";
import type { CommandContext } from "../../../src/adapters/ai/command-context.ts";
import { parseCommandLine, type SimpleCommand } from "../../../src/adapters/ai/shell-words.ts";
import { Workspace } from "../../../src/adapters/ai/workspace.ts";

function words(line: string): SimpleCommand {
  const parsed = parseCommandLine(line);
  assert.ok(parsed.ok, `expected ${JSON.stringify(line)} to parse: ${parsed.ok ? "" : parsed.message}`);
  assert.ok(parsed.command);
  return parsed.command;
}

function refusal(line: string): string {
  const parsed = parseCommandLine(line);
  assert.ok(!parsed.ok, `expected ${JSON.stringify(line)} to be refused`);
  return parsed.message;
}

describe("shell words", () => {
  test("quotes and backslashes split as bash splits them", () => {
    assert.deepEqual(words(`python -c 'print("a b")'`).argv, ["python", "-c", 'print("a b")']);
    assert.deepEqual(words(`echo "it's" 'say "hi"' a\\ b "x\\"y" "\\a" 'c\\d'`).argv, [
      "echo",
      "it's",
      'say "hi"',
      "a b",
      'x"y',
      "\\a",
      "c\\d",
    ]);
    assert.deepEqual(words(`echo a"b"'c'd ""`).argv, ["echo", "abcd", ""]);
    assert.deepEqual(words("python -c 'a = 1\nprint(a)'\n").argv, ["python", "-c", "a = 1\nprint(a)"]);
    assert.deepEqual(words("echo one \\\n two # a comment").argv, ["echo", "one", "two"]);
    assert.deepEqual(words("echo a#b '$HOME' price$ $ \"$\"").argv, ["echo", "a#b", "$HOME", "price$", "$", "$"]);
  });

  test("leading NAME=value words are the program's environment", () => {
    const c = words("A=1 B='x y' python t.py C=3");
    assert.deepEqual({ ...c.assignments }, { A: "1", B: "x y" });
    assert.deepEqual(c.argv, ["python", "t.py", "C=3"]);
    assert.deepEqual(words("'A=1' echo").argv, ["A=1", "echo"]);
  });

  test("output redirections are parsed in order", () => {
    assert.deepEqual(words("python x.py > out.txt 2>&1").redirects, [
      { fd: 1, append: false, target: "out.txt" },
      { fd: 2, toStdout: true },
    ]);
    assert.deepEqual(words("node a.js 2>/dev/null >>log").redirects, [
      { fd: 2, append: false, target: "/dev/null" },
      { fd: 1, append: true, target: "log" },
    ]);
    // A quoted or longer word before '>' is an argument, not a descriptor.
    assert.deepEqual(words("echo '2'>f").argv, ["echo", "2"]);
  });

  test("a blank line or a comment runs nothing", () => {
    assert.deepEqual(parseCommandLine("   # nothing"), { ok: true, command: undefined });
  });

  test("constructs that need a shell are refused, each named", () => {
    const cases: [string, RegExp][] = [
      ["cat a | wc -l", /a pipe/],
      ["mkdir x && cd x", /'&&'/],
      ["true || false", /'\|\|'/],
      ["echo a; echo b", /command list/],
      ["echo a\necho b", /separate lines/],
      ["sleep 1 &", /background/],
      ["python < in.py", /input redirection/],
      ["cat <<EOF\nx\nEOF", /here-document/],
      ["(echo a)", /subshell/],
      ["echo $HOME", /variable expansion/],
      ['echo "${X}"', /variable expansion/],
      ["echo $(ls)", /command substitution/],
      ["echo `ls`", /command substitution/],
      ["echo $'a'", /ANSI-C/],
      ["ls *.csv", /glob/],
      ["cat ~/x", /home directory/],
      ["echo {a,b}", /brace expansion/],
      ["X=1", /setting a variable/],
      ["echo a &> f", /&>/],
      ["echo a 1>&2", /descriptor duplication/],
    ];
    for (const [line, pattern] of cases) assert.match(refusal(line), pattern, line);
  });

  test("unterminated quotes are a syntax error", () => {
    assert.match(refusal("echo 'abc"), /matching/);
    assert.match(refusal('echo "abc'), /matching/);
    assert.match(refusal("echo >"), /file name must follow/);
  });

  test("quoting makes shell characters literal", () => {
    assert.deepEqual(words(`echo '|' "&&" \\; '*' "$" '$(x)' "a>b"`).argv, [
      "echo",
      "|",
      "&&",
      ";",
      "*",
      "$",
      "$(x)",
      "a>b",
    ]);
  });
});

// What one command line does, as bash does it and as the sandbox session does it: `probe` is the
// program, which records its arguments and the variables A, B, X and Y it was given, then writes
// "out" to stdout and "err" to stderr. Under bash it is a shell function, run with `bash -c` in an
// empty directory with an empty environment; here it is played by the test over the parser and the
// session's output routing. Same arguments, same variables, same stdout and stderr, same files.
interface Outcome {
  argv: string[];
  vars: Record<string, string>;
  stdout: string;
  stderr: string;
  files: Record<string, string>;
}

const PROBE_VARS = ["A", "B", "X", "Y"];

function underBash(line: string): Outcome {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-bash-"));
  const record = join(mkdtempSync(join(tmpdir(), "wasmcell-probe-")), "record");
  const probe =
    `exec 9>${record}\n` +
    `probe() { for a in "$@"; do printf '%s\\0' "$a" >&9; done; printf '\\1' >&9; ` +
    `for v in ${PROBE_VARS.join(" ")}; do [ -n "\${!v+set}" ] && printf '%s=%s\\0' "$v" "\${!v}" >&9; done; ` +
    `echo out; echo err >&2; }\n`;
  try {
    // stdout and stderr are pipes, as the session's streams are (Node hands a child sockets, which
    // bash cannot open again as /dev/stdout).
    const piped = `{ ${line}\n} 2> >(cat >&2) | cat`;
    const bash = spawnSync("/usr/bin/bash", ["--norc", "--noprofile", "-c", probe + piped], {
      cwd: dir,
      env: {},
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    assert.equal(bash.status, 0, `bash failed on ${JSON.stringify(line)}: ${bash.stderr}`);
    const { stdout, stderr } = bash;
    const [args = "", vars = ""] = readFileSync(record, "utf8").split("\u0001");
    const files: Record<string, string> = {};
    for (const name of readdirSync(dir)) files[name] = readFileSync(join(dir, name), "utf8");
    return {
      argv: args.split("\0").slice(0, -1),
      vars: Object.fromEntries(
        vars
          .split("\0")
          .slice(0, -1)
          .map((kv) => kv.split(/=(.*)/s).slice(0, 2)),
      ),
      stdout,
      stderr,
      files,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the session's output routing needs: a workspace and the two streams, captured. */
function routingContext(): { workspace: Workspace; out: Record<"stdout" | "stderr", string>; ctx: CommandContext } {
  const workspace = new Workspace("/workspace", { maxBytes: 1 << 20, maxEntries: 100 });
  const out = { stdout: "", stderr: "" };
  const write: CommandContext["write"] = (stream, text) => {
    out[stream] += text;
  };
  const ctx = { workspace, cwd: "", env: {}, write } as Partial<CommandContext> as CommandContext;
  return { workspace, out, ctx };
}

function inTheSession(line: string): Outcome {
  const parsed = parseCommandLine(line);
  assert.ok(parsed.ok, `${JSON.stringify(line)} was refused: ${parsed.ok ? "" : parsed.message}`);
  const command = parsed.command!;
  assert.equal(command.argv[0], "probe", line);
  const { workspace, out, ctx } = routingContext();
  const routed = routeOutput(command.redirects, ctx);
  assert.notEqual(typeof routed, "number", `${line}: the redirections failed: ${out.stderr}`);
  if (typeof routed === "number") throw new Error("unreachable");
  routed.write("stdout", "out\n");
  routed.write("stderr", "err\n");
  routed.flush();
  const decoder = new TextDecoder();
  const files = Object.fromEntries(
    Object.entries(workspace.filesUnder("")).map(([name, bytes]) => [name, decoder.decode(bytes)]),
  );
  const vars = Object.fromEntries(
    PROBE_VARS.filter((v) => v in command.assignments).map((v) => [v, command.assignments[v]!]),
  );
  return { argv: command.argv.slice(1), vars, ...out, files };
}

// Lines the session runs: each must mean what it means to bash.
const SAME_AS_BASH = [
  `probe a 'b c' "d e" f\\ g`,
  `probe "it's" 'say "hi"' "x\\"y" "\\a" 'c\\d' \\'`,
  `probe a"b"'c'd "" ''`,
  "probe one \\\n two # a comment",
  "probe\tx\t\ty",
  `probe a#b x#y "a"#b \\#c '$HOME' price$ $ "$" "a$" "$'x'" $/ "$%"`,
  `probe "line one\nline two" 'a\nb'`,
  `probe if then fi '!' '{' -- -n`,
  "A=1 B='x y' probe t.py C=3",
  "X=a=b Y= probe",
  "probe a=x~ x:~/y --opt=~/z",
  "probe > out.txt 2>&1",
  "probe 2>&1 > out.txt",
  "probe 2>/dev/null >>log",
  "probe 1>f 2>>g",
  "probe '2'>f",
  "probe 2>f x",
  "probe a2>f",
  "probe 2 >f",
  "probe >a >b",
  "> out X=1 probe",
  "probe >| f",
  "probe > /dev/null 2>&1",
  "probe >/dev/stderr",
  "probe 2>/dev/stdout",
  "probe 2>& 1 >o",
  "probe x3>f 3 >g",
  "probe [ x '[[' a[b X+=1",
];

describe("the meaning bash gives a command line", () => {
  for (const line of SAME_AS_BASH) {
    test(JSON.stringify(line), () => {
      assert.deepEqual(inTheSession(line), underBash(line));
    });
  }
});

describe("what bash would read another way is refused, saying why", () => {
  // [line, what the refusal names]; each of these means something to bash that the session cannot do.
  const cases: [string, RegExp][] = [
    ["echo hi 3>f", /descriptor 3/],
    ["echo hi 0>f", /descriptor 0/],
    ["echo hi 10>>f", /descriptor 10/],
    ["echo hi 3>&1", /descriptor 3/],
    ['echo "$[1+2]"', /arithmetic expansion/],
    ["echo $[1+2]", /arithmetic expansion/],
    ["echo $((1+2))", /arithmetic expansion/],
    ['echo "$((1+2))"', /arithmetic expansion/],
    ["! false", /'!'/],
    ["{ echo hi }", /'\{'/],
    ["if true", /'if'/],
    ["time python x.py", /'time'/],
    ["[[ -f x ]]", /'\[\['/],
    ["for x in a", /'for'/],
    ["while true", /'while'/],
    ["function f", /'function'/],
    ["X+=1 echo", /'\+='/],
    ["echo a=~/x", /home directory/],
    ["X=~ echo", /home directory/],
    ["X=a:~/b echo", /home directory/],
    ["echo a 1>&2", /descriptor duplication/],
    ["echo a >&2", /descriptor duplication/],
    ["echo a <> f", /input redirection/],
    ["cat <<< x", /here-string/],
    ["echo a |& cat", /pipe/],
    ["echo a &>> f", /&>/],
    ["echo {fd}>f", /brace/],
  ];
  for (const [line, pattern] of cases) {
    test(JSON.stringify(line), () => {
      assert.match(refusal(line), pattern);
    });
  }

  test("two redirections that name the same file (bash writes each at its own offset) are refused", () => {
    const parsed = parseCommandLine("echo a >f 2>./f");
    assert.ok(parsed.ok && parsed.command);
    const { out, ctx } = routingContext();
    assert.equal(routeOutput(parsed.command.redirects, ctx), 2);
    assert.match(out.stderr, /'f' is named by two redirections/);
  });
});
