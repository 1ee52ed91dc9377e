// The bridge from guest Python to the sidecar: three character devices in Pyodide's file system,
// /dev/wasmcell-net (the host's gated fetch, net.ts), /dev/wasmcell-idle (the event loop's idle
// wait, loop.ts) and /dev/wasmcell-display (display items, display.ts: written, never read). Python
// opens one, writes bytes and reads bytes back; nothing else crosses.
//
// Why devices and not functions handed to Python: a JavaScript function Python holds is a JsProxy,
// and a JsProxy is a handle on the realm. `.new()` on one raised a JavaScript error that Python got
// as a JsException holding the live error object; its constructor chain gave the realm's Function
// and Error, a Python callable as Error.prepareStackTrace then got the WebAssembly.Instance from a
// wasm frame, and with it the function table (guards.ts now also locks that hook). A device's
// functions live in this module's closure, which no Python object refers to: the guest holds a file
// descriptor, gets bytes, and every failure is an errno (a plain OSError), never a JavaScript error.
// The devices are JS-side file-system state made on every start (after the snapshot, before the
// checkpoint), so the checkpoint records them like /dev/null and puts them back after a run.

import { display, sendDisplay } from "./display.ts";
import { memory } from "./limits.ts";
import { idleWait } from "./loop.ts";
import { hostFetch } from "./net.ts";

/** Emscripten's errno numbers. */
const EIO = 29;
const EINVAL = 28;
const ENOMEM = 48;
const EFBIG = 22;

export const NET_DEVICE = "/dev/wasmcell-net";
export const IDLE_DEVICE = "/dev/wasmcell-idle";
export const DISPLAY_DEVICE = "/dev/wasmcell-display";
/** Device numbers from Linux's "local/experimental use" range, unused by Emscripten's own devices. */
const NET_DEV = [240, 0] as const;
const IDLE_DEV = [240, 1] as const;
const DISPLAY_DEV = [240, 2] as const;

interface Stream {
  readonly node: unknown;
}
interface StreamOps {
  open?(stream: Stream): void;
  close?(stream: Stream): void;
  read(stream: Stream, buffer: Int8Array, offset: number, length: number, position: number): number;
  write(stream: Stream, buffer: Int8Array, offset: number, length: number, position: number): number;
  llseek(stream: Stream, offset: number, whence: number): number;
}
interface DeviceFS {
  makedev(major: number, minor: number): number;
  registerDevice(dev: number, ops: StreamOps): void;
  mkdev(path: string, mode: number, dev: number): unknown;
  ErrnoError: new (errno: number) => Error;
}

/** A request written to the net device, then its reply read back, per open file. */
interface Exchange {
  request: Buffer[];
  /** The bytes in `request` (counted in `pending`). */
  bytes: number;
  reply?: Buffer;
  at: number;
}

export function installBridgeDevices(M: object): void {
  const FS = (M as { FS: DeviceFS }).FS;
  const fail = (errno: number): never => {
    throw new FS.ErrnoError(errno);
  };
  const bytesOf = (buffer: Int8Array, offset: number, length: number) =>
    Buffer.from(buffer.buffer, buffer.byteOffset + offset, length);
  const exchanges = new WeakMap<Stream, Exchange>();
  // Bytes held in the JS heap (outside the WASM memory cap) by every open exchange: requests being
  // written and replies not read yet. A new request is refused (ENOMEM) while they are over the run's
  // memory cap, so a guest holding many descriptors open gets an errno, not the sidecar's heap.
  let pending = 0;
  const held = (e: Exchange) => e.bytes + (e.reply ? e.reply.length - e.at : 0);
  const exchange = (stream: Stream): Exchange => {
    let e = exchanges.get(stream);
    if (!e) exchanges.set(stream, (e = { request: [], bytes: 0, at: 0 }));
    return e;
  };
  const net: StreamOps = {
    close(stream) {
      const e = exchanges.get(stream);
      if (e) pending -= held(e);
      exchanges.delete(stream);
    },
    // Writes accumulate the request; the first read sends it and reads the reply; 0 is its end.
    write(stream, buffer, offset, length) {
      const e = exchange(stream);
      if (e.reply) fail(EINVAL); // one request per open
      if (pending + length > memory.capBytes) fail(ENOMEM);
      e.request.push(Buffer.from(bytesOf(buffer, offset, length)));
      pending += length;
      e.bytes += length;
      return length;
    },
    read(stream, buffer, offset, length) {
      const e = exchange(stream);
      if (!e.reply) {
        const request = Buffer.concat(e.request).toString("utf8");
        pending -= e.bytes;
        e.request = [];
        e.bytes = 0;
        let reply: string;
        try {
          reply = hostFetch(request);
        } catch {
          return fail(EIO);
        }
        e.reply = Buffer.from(reply, "utf8");
        pending += e.reply.length;
      }
      const n = Math.min(length, e.reply.length - e.at);
      bytesOf(buffer, offset, n).set(e.reply.subarray(e.at, e.at + n));
      e.at += n;
      pending -= n;
      if (e.at === e.reply.length && n > 0) {
        e.reply = Buffer.alloc(0); // read to the end: nothing more to hold
        e.at = 0;
      }
      return n;
    },
    llseek: () => fail(EINVAL),
  };
  const idle: StreamOps = {
    // The milliseconds to wait, as ASCII digits (loop.py writes at most 50).
    write(_stream, buffer, offset, length) {
      const text = bytesOf(buffer, offset, Math.min(length, 32)).toString("latin1");
      if (length > 32 || !/^\d+(\.\d+)?$/.test(text)) fail(EINVAL);
      idleWait(Number(text));
      return length;
    },
    read: () => 0,
    llseek: () => fail(EINVAL),
  };
  // One item per open: the writes accumulate it (at most display.maxBytes, counted in `pending`
  // against the memory cap like a request), the close sends it.
  const items = new WeakMap<Stream, { chunks: Buffer[]; bytes: number }>();
  const shown: StreamOps = {
    close(stream) {
      const item = items.get(stream);
      items.delete(stream);
      if (!item) return;
      pending -= item.bytes;
      sendDisplay(Buffer.concat(item.chunks).toString("utf8"));
    },
    write(stream, buffer, offset, length) {
      let item = items.get(stream);
      if (!item) items.set(stream, (item = { chunks: [], bytes: 0 }));
      if (item.bytes + length > display.maxBytes) {
        display.over = true;
        pending -= item.bytes;
        items.delete(stream);
        fail(EFBIG);
      }
      if (pending + length > memory.capBytes) fail(ENOMEM);
      item.chunks.push(Buffer.from(bytesOf(buffer, offset, length)));
      item.bytes += length;
      pending += length;
      return length;
    },
    read: () => fail(EINVAL),
    llseek: () => fail(EINVAL),
  };
  for (const ops of [net, idle, shown]) Object.freeze(ops);
  const netDev = FS.makedev(...NET_DEV);
  const idleDev = FS.makedev(...IDLE_DEV);
  const displayDev = FS.makedev(...DISPLAY_DEV);
  FS.registerDevice(netDev, net);
  FS.registerDevice(idleDev, idle);
  FS.registerDevice(displayDev, shown);
  FS.mkdev(NET_DEVICE, 0o666, netDev);
  FS.mkdev(IDLE_DEVICE, 0o666, idleDev);
  FS.mkdev(DISPLAY_DEVICE, 0o666, displayDev);
}
