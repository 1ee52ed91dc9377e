// The host's reader for a sidecar's framing, fed directly: split lines, bounded lines, bad lines,
// raw byte runs, and the end of the stream.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { LineReader, ProtocolError } from "../../../src/engines/pyodide/line-reader.ts";

function reader(maxLine = 1024): { stream: PassThrough; lines: LineReader } {
  const stream = new PassThrough();
  return { stream, lines: new LineReader(stream, maxLine) };
}

describe("LineReader", () => {
  test("a line split across chunks, and two lines in one chunk", async () => {
    const { stream, lines } = reader();
    stream.write('{"t":"a",');
    stream.write('"n":1}\n{"t":"b"}\n');
    assert.deepEqual(await lines.next(), { t: "a", n: 1 });
    assert.deepEqual(await lines.next(), { t: "b" });
    stream.end();
    assert.equal(await lines.next(), undefined);
  });

  test("a line over maxLine without a newline is refused once maxLine bytes are buffered", async () => {
    const { stream, lines } = reader(100);
    stream.write("x".repeat(101));
    await assert.rejects(lines.next(), ProtocolError);
    // and stays refused
    stream.write("\n{}\n");
    await assert.rejects(lines.next(), /over 100 bytes/);
  });

  test("a line over maxLine that arrives with its newline in one chunk is refused too", async () => {
    const { stream, lines } = reader(100);
    stream.write(`{"t":"${"x".repeat(200)}"}\n`);
    await assert.rejects(lines.next(), /over 100 bytes/);
  });

  test("a line exactly at maxLine is accepted", async () => {
    const { stream, lines } = reader(20);
    const line = `{"t":"${"x".repeat(12)}"}`;
    assert.equal(line.length, 20);
    stream.write(`${line}\n`);
    assert.deepEqual(await lines.next(), { t: "x".repeat(12) });
  });

  for (const [what, line] of [
    ["not JSON", "{nope"],
    ["an array", "[1]"],
    ["a string", '"s"'],
    ["null", "null"],
  ] as const) {
    test(`a line that is ${what} is a protocol error`, async () => {
      const { stream, lines } = reader();
      stream.write(`${line}\n`);
      await assert.rejects(lines.next(), ProtocolError);
    });
  }

  test("raw bytes between lines, split across chunks", async () => {
    const { stream, lines } = reader();
    stream.write('{"t":"snapshot","bytes":5}\nab');
    assert.deepEqual(await lines.next(), { t: "snapshot", bytes: 5 });
    const pending = lines.bytes(5);
    stream.write("cde");
    stream.write('{"t":"after"}\n');
    assert.equal(Buffer.from((await pending)!).toString(), "abcde");
    assert.deepEqual(await lines.next(), { t: "after" });
  });

  test("the stream ending mid-line or mid-bytes gives undefined", async () => {
    const a = reader();
    a.stream.end('{"t":"cut');
    assert.equal(await a.lines.next(), undefined);
    const b = reader();
    b.stream.end("abc");
    assert.equal(await b.lines.bytes(5), undefined);
  });

  test("maxLine can change between lines (the host sets it per run)", async () => {
    const { stream, lines } = reader(10);
    lines.maxLine = 1000;
    stream.write(`{"t":"${"x".repeat(100)}"}\n`);
    assert.equal((await lines.next())?.t, "x".repeat(100));
  });
});
