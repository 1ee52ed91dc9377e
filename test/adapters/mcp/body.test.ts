// The HTTP server's body reading (src/adapters/mcp/body.ts) on a real socket: a refused body is read to
// its end before the answer, and neither its size nor its time is the client's to choose.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { describe, it } from "node:test";
import { BodyError, discardLimit, readJson, settleBody } from "../../../src/adapters/mcp/body.ts";

/** A server whose every request is answered by `handle`, on an ephemeral loopback port. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Opens a raw connection and sends a chunked POST's head; the body is the caller's to write. */
async function chunkedPost(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n");
  return socket;
}

/** Resolves when the socket is closed, however it ended (events.once would reject on its reset). */
const closed = (socket: Socket) => new Promise((r) => socket.once("close", r));

describe("mcp http bodies", () => {
  it("a refused body trickled in and never finished is cut once its time is up", { timeout: 30_000 }, async () => {
    await using server = await serve(async (req, res) => {
      await settleBody(req, 1024, 300);
      if (!res.destroyed) res.end("answered");
    });
    const socket = await chunkedPost(server.port);
    // One byte every 20 ms, for ever: without the time bound the server would read it until Node's
    // five-minute request timeout.
    const drip = setInterval(() => socket.writable && socket.write("1\r\nx\r\n"), 20);
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    socket.on("error", () => undefined); // the cut may reach this end as a reset
    try {
      await closed(socket);
    } finally {
      clearInterval(drip);
    }
    assert.equal(answer, "", "the server cut the connection rather than answer a body it never got");
  });

  it("a refused body that arrives in time is read to its end, then answered", async () => {
    await using server = await serve(async (req, res) => {
      await settleBody(req, 1024);
      res.end("answered");
    });
    const socket = await chunkedPost(server.port);
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    for (let i = 0; i < 8; i++) socket.write(`4000\r\n${"y".repeat(0x4000)}\r\n`);
    socket.end("0\r\n\r\n");
    await closed(socket);
    assert.match(answer, /^HTTP\/1\.1 200[\s\S]*answered/);
  });

  it("a body declared or found past the discard limit is cut, never read whole", async () => {
    const seen: number[] = [];
    await using server = await serve(async (req, res) => {
      const body = await readJson(req, 1024);
      assert.ok(body instanceof BodyError && body.status === 413);
      seen.push(Number(req.headers["content-length"] ?? -1));
      await settleBody(req, 1024);
      if (!res.destroyed) res.end("answered");
    });
    const limit = discardLimit(1024);
    const declared = connect(server.port, "127.0.0.1");
    await once(declared, "connect");
    declared.on("error", () => undefined);
    declared.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${limit + 1}\r\n\r\n`);
    await closed(declared);
    const chunked = await chunkedPost(server.port);
    chunked.on("error", () => undefined);
    let sent = 0;
    const block = `10000\r\n${"z".repeat(0x10000)}\r\n`;
    // Keeps sending past the limit until the server cuts the connection.
    while (!chunked.destroyed && sent <= 2 * limit) {
      if (!chunked.write(block)) await Promise.race([new Promise((r) => chunked.once("drain", r)), closed(chunked)]);
      sent += 0x10000;
    }
    if (!chunked.destroyed) await closed(chunked);
    assert.ok(sent <= 2 * limit, `the server read ${sent} bytes of a body past ${limit}`);
    assert.deepEqual(seen, [limit + 1, -1]);
  });
});
