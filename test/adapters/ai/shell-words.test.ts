// The command-line parser: bash's word splitting for one simple command, and a refusal (never a
// different meaning) for every construct that needs a real shell.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCommandLine, type SimpleCommand } from "../../../src/adapters/ai/shell-words.ts";

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
