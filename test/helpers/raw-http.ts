// A loopback server that answers HTTP requests with whatever bytes the test scripts: odd status
// lines, upgrades, malformed heads, trickled bodies, early closes. A raw `net` server, because
// Node's HTTP server refuses to send most of these. It counts the connections still open on its
// side, so "nothing of the run is left open" is observed from the far end of every socket.
import { createServer, type Socket } from "node:net";
import { listenLoopback } from "./http.ts";

/** What to send: bytes, or a pause in milliseconds. After the last step the socket ends or hangs. */
export interface RawAnswer {
  steps: Array<string | Uint8Array | number>;
  /** "end": half-close after the last step; "destroy": reset; "hang": keep the socket open. */
  then: "end" | "destroy" | "hang";
}

export interface RawServer {
  port: number;
  origin: string;
  /** Connections open right now (the far end has not closed them). */
  open(): number;
  /** Connections ever accepted. */
  accepted(): number;
  /** Resolves once no connection is open (bounded: rejects after `ms`). */
  drained(ms?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Answers each request by its path: `answer(path)` (the request line's target, `/...`, or the
 * absolute URI when it came through a proxy) gives the script. The request head is read first (up
 * to the blank line, at most 64 KiB); a body is not waited for.
 */
export async function startRawServer(answer: (path: string) => RawAnswer): Promise<RawServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 65_536) socket.destroy();
        return;
      }
      socket.off("data", onData);
      const target = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r\n/.exec(head)?.[1] ?? "/";
      const path = target.startsWith("/") ? target : new URL(target).pathname;
      play(socket, answer(path));
    };
    socket.on("data", onData);
  });
  const port = await listenLoopback(server);
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    open: () => sockets.size,
    accepted: () => accepted,
    drained: async (ms = 5_000) => {
      const until = performance.now() + ms;
      while (sockets.size > 0) {
        if (performance.now() > until) throw new Error(`${sockets.size} connection(s) still open after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function play(socket: Socket, answer: RawAnswer): void {
  const steps = [...answer.steps];
  const next = (): void => {
    if (socket.destroyed) return;
    const step = steps.shift();
    if (step === undefined) {
      if (answer.then === "end") socket.end();
      else if (answer.then === "destroy") socket.destroy();
      return;
    }
    if (typeof step === "number") {
      setTimeout(next, step).unref();
      return;
    }
    socket.write(step, () => next());
  };
  next();
}

/** A complete answer: `status line` (e.g. "HTTP/1.1 099 Odd"), optional headers, a body, then end. */
export function rawAnswer(statusLine: string, headers: string[] = [], body = ""): RawAnswer {
  const head = [statusLine, ...headers, `content-length: ${Buffer.byteLength(body)}`, "connection: close"];
  return { steps: [`${head.join("\r\n")}\r\n\r\n${body}`], then: "end" };
}

/**
 * The answers an allowed server may give that the gate must refuse or survive, by path, with what a
 * guest sees: `refused` (the gate names the status or the upgrade), `failed` (a broken answer: the
 * request fails), or the body it reads.
 */
export const HOSTILE_ANSWERS: Record<string, { answer: RawAnswer; expect: string }> = {
  "/s000": { answer: rawAnswer("HTTP/1.1 000 Zero"), expect: "refused" },
  "/s099": { answer: rawAnswer("HTTP/1.1 099 Low"), expect: "refused" },
  "/s101-upgrade": {
    answer: {
      steps: ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"],
      then: "hang",
    },
    expect: "refused",
  },
  "/s101": { answer: rawAnswer("HTTP/1.1 101 Switching Protocols"), expect: "refused" },
  // An informational answer with no final one after it: the connection ends, the request fails.
  "/s199": { answer: { steps: ["HTTP/1.1 199 Early\r\n\r\n"], then: "end" }, expect: "failed" },
  "/s600": { answer: rawAnswer("HTTP/1.1 600 High"), expect: "refused" },
  "/s999": { answer: rawAnswer("HTTP/1.1 999 Top", [], "body"), expect: "refused" },
  "/bad-status": { answer: { steps: ["HTTP/1.1 2x0 Bad\r\n\r\n"], then: "end" }, expect: "failed" },
  "/bad-header": { answer: { steps: ["HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"], then: "end" }, expect: "failed" },
  "/early-close": {
    answer: { steps: ["HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc"], then: "destroy" },
    expect: "failed",
  },
  "/trickle": {
    answer: {
      steps: ["HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", 30, "a", 30, "b", 30, "c", 30, "de"],
      then: "end",
    },
    expect: "abcde",
  },
};

/** HOSTILE_ANSWERS by path; `/silent` sends nothing and holds the connection; anything else is a 404. */
export const hostileAnswer = (path: string): RawAnswer =>
  HOSTILE_ANSWERS[path]?.answer ??
  (path === "/silent" ? { steps: [], then: "hang" } : rawAnswer("HTTP/1.1 404 Not Found", [], "not found"));

/** What a guest's message says for `expect` (see HOSTILE_ANSWERS). */
export function hostileOutcome(expect: string): RegExp {
  if (expect === "refused") return /^network: 127\.0\.0\.1:\d+ answered .*: refused/;
  if (expect === "failed") return /^network: .*(failed|closed)/;
  return new RegExp(`^reached 200 ${expect}$`);
}
