// A guest string read whole. quickjs-emscripten's getString crosses as a C string, which ends at the
// first NUL: "a\0b" would reach a host binding as "a" (a URL, a file's text, a hashed message cut
// short, silently). When the length read back differs from the guest's own, the string is read again
// through the service realm's serialiser, whose JSON text escapes NUL.
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { Cell } from "./cell.ts";
import { decodeValue } from "./decode.ts";

export function readGuestString(ctx: QuickJSContext, cell: Cell, h: QuickJSHandle, maxBytes: number): string {
  const s = ctx.getString(h);
  const lengthHandle = ctx.getProp(h, "length");
  const length = ctx.getNumber(lengthHandle);
  lengthHandle.dispose();
  if (length === s.length) return s;
  const r = cell.serialize(h, maxBytes);
  if (r.error) {
    r.error.dispose();
    throw new TypeError(`a string argument is longer than ${maxBytes} bytes`);
  }
  const text = cell.svc.typeof(r.value) === "string" ? cell.svc.getString(r.value) : undefined;
  r.value.dispose();
  const value = text === undefined ? undefined : decodeValue(text);
  if (typeof value !== "string") throw new TypeError(`a string argument is longer than ${maxBytes} bytes`);
  return value;
}
