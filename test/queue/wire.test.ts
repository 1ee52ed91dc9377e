// A queue reply carries the run's display items: a worker's reply round-trips them, and a reply whose
// items are malformed (a MIME type off the list, too many) is a `crashed` result, never believed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeReply, resultReply, WIRE } from "../../src/queue/wire.ts";
import type { RunResult } from "../../src/core/types.ts";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64");
const result: RunResult = {
  ok: true,
  value: 1,
  language: "python",
  stdout: "",
  stderr: "",
  outputTruncated: false,
  files: [],
  results: [
    { data: { "text/plain": "<Figure>", "image/png": PNG }, main: false },
    { data: { "text/plain": "t", "text/html": "<table></table>", "application/json": { a: [1] } }, main: true },
  ],
  stats: { engine: "native", wallMs: 5, outputBytes: 0 },
};

describe("queue wire: display items", () => {
  it("a reply carries them through JSON", () => {
    const reply = JSON.parse(JSON.stringify(resultReply("w1", result))) as unknown;
    const back = decodeReply(reply, "python");
    assert.deepEqual(back.results, result.results);
  });

  it("malformed or too many items make the reply a crashed result", () => {
    const reply = resultReply("w1", result) as { result: { results: unknown[] } };
    reply.result.results = [{ data: { "text/plain": "x", "x/evil": "y" }, main: false }];
    const bad = decodeReply(reply, "python");
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.error.message : "", /display items are malformed: .*x\/evil/);
    reply.result.results = Array.from({ length: WIRE.maxResults + 1 }, () => ({
      data: { "text/plain": "i" },
      main: false,
    }));
    const many = decodeReply(reply, "python");
    assert.equal(many.ok, false);
    assert.match(!many.ok ? many.error.message : "", /malformed/);
  });
});
