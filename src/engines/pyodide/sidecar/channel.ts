// The sidecar's protocol channel (see ../protocol.ts): frames out on fd 1, written synchronously —
// nothing else may write there (console.* and process.stdout.write are sent to stderr) — and the
// host's frames in on stdin: the init line, the snapshot bytes (unless it is read from the descriptor
// the host passed), then JSON lines.

import { closeSync, readSync, writeSync } from "node:fs";
import { format } from "node:util";
import type { HostMessage, InitMessage, SidecarMessage } from "../protocol.ts";

export function send(message: SidecarMessage): void {
  writeAll(Buffer.from(JSON.stringify(message) + "\n", "utf8"));
}

export function writeAll(data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(1, data, offset, data.length - offset);
    } catch (error) {
      // EAGAIN on a non-blocking pipe: retry; anything else means the host is gone.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") process.exit(0);
    }
  }
}

/** Reports a fatal error to the host (bounded) and exits. */
export function die(message: string, code = 70): never {
  try {
    send({ t: "fatal", message: message.slice(0, 4000) });
  } finally {
    process.exit(code);
  }
}

/** Only frames reach fd 1: every other writer in the process goes to stderr; crashes become `fatal`. */
export function claimStdout(): void {
  const toStderr = (...args: unknown[]): void => {
    process.stderr.write(format(...args) + "\n");
  };
  console.log = console.info = console.debug = console.warn = console.error = toStderr;
  process.stdout.write = (chunk: string | Uint8Array) => process.stderr.write(chunk);
  process.on("uncaughtException", (error) => die(`uncaught: ${String(error?.stack ?? error)}`));
  process.on("unhandledRejection", (error) => die(`unhandled rejection: ${String((error as Error)?.stack ?? error)}`));
}

// ---- stdin ----
// Chunks are kept in a list and joined once per need: the 30 MB snapshot arrives in ~64 KiB chunks,
// and concatenating on every chunk would copy gigabytes.
let chunks: Buffer[] = [];
let buffered = 0;
let init: InitMessage | undefined;
let snapshot: Uint8Array | undefined;
let snapshotReceived = false;
let initDelivered = false;
const queue: HostMessage[] = [];
/** A `load` line whose raw bytes are still arriving. */
let loading: (HostMessage & { t: "load" }) | undefined;
let wake: (() => void) | undefined;

function joined(): Buffer {
  if (chunks.length > 1) chunks = [Buffer.concat(chunks)];
  return chunks[0] ?? Buffer.alloc(0);
}
function consume(n: number): void {
  const all = joined();
  // Copy the rest: a view would keep the whole (snapshot-sized) buffer alive.
  chunks = n < all.length ? [Buffer.from(all.subarray(n))] : [];
  buffered -= n;
}

/** The snapshot from the descriptor the host passed (it opened and verified the file), then closed. */
function readSnapshotFd(fd: number, bytes: number): Uint8Array {
  // A fresh buffer: Pyodide reads the snapshot through a Uint32Array, so it must start 4-byte aligned.
  const out = new Uint8Array(bytes);
  for (let offset = 0; offset < bytes;) {
    const n = readSync(fd, out, offset, bytes - offset, offset);
    if (n === 0) die(`the snapshot descriptor ended after ${offset} of ${bytes} bytes`);
    offset += n;
  }
  closeSync(fd);
  return out;
}

function pump(): void {
  for (;;) {
    if (init && !snapshotReceived && init.snapshotFd !== undefined) {
      snapshot = readSnapshotFd(init.snapshotFd, init.snapshotBytes);
      snapshotReceived = true;
      continue;
    }
    if (init && !snapshotReceived) {
      if (buffered < init.snapshotBytes) return;
      // A copy: Pyodide reads the snapshot through a Uint32Array, so it must start 4-byte aligned.
      snapshot = new Uint8Array(joined().subarray(0, init.snapshotBytes));
      consume(init.snapshotBytes);
      snapshotReceived = true;
      continue;
    }
    if (loading) {
      if (buffered < loading.bytes) return;
      loading.data = new Uint8Array(joined().subarray(0, loading.bytes));
      consume(loading.bytes);
      queue.push(loading);
      loading = undefined;
      continue;
    }
    if (buffered === 0) return;
    const all = joined();
    const newline = all.indexOf(10);
    if (newline < 0) return;
    const line = all.subarray(0, newline).toString("utf8");
    consume(newline + 1);
    if (!init) {
      init = JSON.parse(line) as InitMessage;
      continue;
    }
    const message = JSON.parse(line) as HostMessage;
    if (message.t === "load") loading = message;
    else queue.push(message);
  }
}

/** Starts reading stdin; the host closing it ends the process. */
export function listen(): void {
  process.stdin.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    buffered += chunk.length;
    // While the snapshot streams in, only look once it is all here.
    if (init && !snapshotReceived && init.snapshotFd === undefined && buffered < init.snapshotBytes) return;
    if (loading && buffered < loading.bytes) return;
    pump();
    wake?.();
  });
  process.stdin.on("end", () => process.exit(0));
}

/** The init message once it and the snapshot it announces have arrived (undefined before). */
export function initMessage(): InitMessage | undefined {
  return init;
}

/** Hands over the snapshot bytes once (the channel keeps no reference: 30 MB to collect). */
export function takeSnapshot(): Uint8Array | undefined {
  const bytes = snapshot;
  snapshot = undefined;
  return bytes;
}

/** The next message: "init" first (once init and snapshot are in), then the host's frames in order. */
export function nextMessage(): Promise<HostMessage | "init"> {
  return new Promise((resolve) => {
    const check = () => {
      if (init && snapshotReceived && !initDelivered) {
        initDelivered = true;
        return resolve("init");
      }
      const message = queue.shift();
      if (message) return resolve(message);
      wake = () => {
        wake = undefined;
        check();
      };
    };
    check();
  });
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const readBuffer = Buffer.alloc(1 << 16);

/**
 * Blocks, reading stdin synchronously, until a frame `match` accepts arrives, and takes it out of the
 * queue. For a call Python waits on: the event loop is not running then, so no other reader takes
 * stdin; frames that arrive meanwhile stay queued in order for nextMessage.
 */
export function waitForFrame<T extends HostMessage>(match: (m: HostMessage) => m is T): T {
  for (let lineEnded = true; ;) {
    // Parse only when a frame may have ended (joining the chunks on every read would be quadratic).
    if (lineEnded) pump();
    const at = queue.findIndex(match);
    if (at >= 0) return queue.splice(at, 1)[0] as T;
    let n: number;
    try {
      n = readSync(0, readBuffer, 0, readBuffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") process.exit(0);
      Atomics.wait(sleeper, 0, 0, 1);
      continue;
    }
    if (n === 0) process.exit(0);
    lineEnded = readBuffer.subarray(0, n).includes(10);
    chunks.push(Buffer.from(readBuffer.subarray(0, n)));
    buffered += n;
  }
}
