// Threat: guest output that drives the user's terminal (escape sequences that retitle the window,
// write the clipboard with OSC 52, or repaint the screen) when `wasmcell run` shows it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { forTerminal } from "../../src/cli/terminal.ts";

test("guest text bound for a terminal cannot send escape sequences; pipes get it unchanged", () => {
  const hostile = "ok\n\x1b]52;c;cHduZWQ=\x07\x1b[2J\ttab\rcr";
  const tty = { isTTY: true } as unknown as NodeJS.WritableStream;
  const pipe = {} as NodeJS.WritableStream;
  assert.equal(forTerminal(tty, hostile), "ok\n\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\ttab\rcr");
  assert.equal(forTerminal(pipe, hostile), hostile);
});
