// The guest's `fs` global, host side: each call's arguments read from handles, checked by MemFs (the
// per-run in-memory file system), and the answer built in the user realm. Bad arguments throw a
// TypeError or FsError into the guest; short-lived handles are freed through a Scope.

import { Scope, type QuickJSHandle } from "quickjs-emscripten-core";
import type { FsOp, Guest } from "./guest.ts";
import { contextPointer } from "./internals.ts";
import type { MemFs } from "./memfs.ts";
import { readGuestString } from "./strings.ts";

// A string written to a file is bounded by the run's memory cap already; this only bounds the copy.
const MAX_STRING_BYTES = 1 << 30;

export function fsCall(guest: Guest, fs: MemFs, op: FsOp, args: QuickJSHandle[]): QuickJSHandle | undefined {
  const { ctx, toUint8Array } = guest;
  const str = (h: QuickJSHandle | undefined) =>
    h && ctx.typeof(h) === "string"
      ? readGuestString(ctx, guest.cell, h, MAX_STRING_BYTES)
      : h && ctx.typeof(h) !== "undefined"
        ? (ctx.dump(h) as unknown)
        : undefined;
  const path = str(args[0]) as string;
  switch (op) {
    case "readFileSync": {
      const bytes = fs.read(path);
      const options = args[1];
      const opt = options
        ? ctx.typeof(options) === "object"
          ? Scope.withScope((scope) => str(scope.manage(ctx.getProp(options, "encoding"))))
          : str(options)
        : undefined;
      if (typeof opt === "string") return ctx.newString(new TextDecoder().decode(bytes));
      const buf = ctx.newArrayBuffer(bytes.slice().buffer);
      const r = ctx.callFunction(toUint8Array as QuickJSHandle, ctx.undefined, buf);
      buf.dispose();
      if (r.error) return r.error; // cannot happen with a captured helper; surfaces as a value
      return r.value;
    }
    case "writeFileSync":
    case "appendFileSync": {
      const data = args[1];
      let bytes: Uint8Array;
      if (!data) throw new TypeError(`The "data" argument must be a string or a Uint8Array`);
      if (ctx.typeof(data) === "string")
        bytes = new TextEncoder().encode(readGuestString(ctx, guest.cell, data, MAX_STRING_BYTES));
      else bytes = bytesOf(guest, data);
      fs.write(path, bytes, op === "appendFileSync");
      return undefined;
    }
    case "existsSync":
      return fs.exists(path) ? ctx.true : ctx.false;
    case "readdirSync": {
      const names = fs.readdir(args[0] ? path : undefined);
      const arr = ctx.newArray();
      names.forEach((n, i) => {
        const s = ctx.newString(n);
        ctx.setProp(arr, i, s);
        s.dispose();
      });
      return arr;
    }
    case "unlinkSync":
      fs.unlink(path);
      return undefined;
    case "mkdirSync":
      fs.resolve(path); // directories are implied by file paths; only the path is checked
      return undefined;
  }
}

function bytesOf(guest: Guest, data: QuickJSHandle): Uint8Array {
  const { ctx } = guest;
  const tryBuffer = (h: QuickJSHandle): Uint8Array | undefined => {
    const len = guest.cell.wasm.quickjs.getFFI().QTS_GetArrayBufferLength(contextPointer(ctx) as never, h.value);
    if (!len) return undefined;
    const lt = ctx.getArrayBuffer(h);
    const copy = lt.value.slice();
    lt.dispose();
    return copy;
  };
  const direct = ctx.typeof(data) === "object" ? tryBuffer(data) : undefined;
  if (direct) return direct;
  const buffer = ctx.getProp(data, "buffer");
  const off = ctx.getProp(data, "byteOffset");
  const len = ctx.getProp(data, "byteLength");
  try {
    if (ctx.typeof(buffer) !== "object" || ctx.typeof(off) !== "number" || ctx.typeof(len) !== "number") {
      throw new TypeError(`The "data" argument must be a string or a Uint8Array`);
    }
    const all = tryBuffer(buffer) ?? new Uint8Array(0);
    const o = ctx.getNumber(off);
    return all.slice(o, o + ctx.getNumber(len));
  } finally {
    buffer.dispose();
    off.dispose();
    len.dispose();
  }
}
