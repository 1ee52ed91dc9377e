// Value marshalling between the user realm and the host. Out: the service realm serialises a guest
// value to JSON text (service.ts), the host rebuilds plain data (decode.ts). In: host data becomes JSON
// text, parsed by the user realm's own JSON.parse captured before user code ran.

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { decodeValue } from "./decode.ts";
import type { Guest } from "./guest.ts";
import { describeHostError } from "../../../kit/failures.ts";
import { utf8Length } from "./text-output.ts";

export type ReadResult =
  | { ok: true; value: unknown }
  /** Over `max` bytes, or the serialiser refused it (exception undefined), or guest code threw while it ran. */
  | { ok: false; exception?: QuickJSHandle };

/**
 * Copies a guest value out as host data. Numbers, booleans, bigints and undefined directly; strings and
 * everything else through the service realm's serialiser (getString crosses as UTF-8 through a C string,
 * which would cut a string at NUL and replace lone surrogates; JSON text escapes both).
 */
export function readValue(guest: Guest, h: QuickJSHandle, max: number): ReadResult {
  const { ctx, cell } = guest;
  const type = ctx.typeof(h);
  if (type === "number") return { ok: true, value: ctx.getNumber(h) };
  if (type === "undefined") return { ok: true, value: undefined };
  if (type === "boolean") return { ok: true, value: ctx.dump(h) as boolean };
  if (type === "bigint") return { ok: true, value: ctx.getBigInt(h) };
  const r = cell.serialize(h, max);
  if (r.error) return { ok: false, exception: r.error };
  const text = cell.svc.typeof(r.value) === "string" ? cell.svc.getString(r.value) : undefined;
  r.value.dispose();
  if (text === undefined || utf8Length(text) > max) return { ok: false };
  return { ok: true, value: decodeValue(text) };
}

/** Host data -> a user-realm value (a host function's result). Never throws for the data's sake. */
export function toGuest(guest: Guest, value: unknown, max: number): QuickJSHandle {
  const { ctx, jsonParse } = guest;
  const typeError = (message: string) => ctx.newError({ name: "TypeError", message });
  if (value === undefined) return ctx.undefined.dup();
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return typeError(`the host function's result is not JSON-serialisable (${describeHostError(error)})`);
  }
  if (json === undefined) return ctx.undefined.dup();
  if (utf8Length(json) > max)
    return typeError(`the host function's result is larger than ${max} bytes (limits.maxResultBytes)`);
  if (!jsonParse) throw new Error("wasmcell: JSON.parse was not captured");
  const text = ctx.newString(json);
  const r = ctx.callFunction(jsonParse, ctx.undefined, text);
  text.dispose();
  if (r.error) return r.error; // resolving with an error value is better than losing the call
  return r.value;
}

/**
 * A host call's arguments as data: the service realm serialises them in the guest (under the run's
 * deadline), the host rebuilds them from the string. A string result says what is wrong with them.
 */
export function argumentsAsData(guest: Guest, args: QuickJSHandle[], maxBytes: number): unknown[] | string {
  const { ctx, cell } = guest;
  const direct = plainPrimitives(ctx, args, maxBytes);
  if (direct !== undefined) return direct;
  const arr = ctx.newArray();
  args.forEach((a, i) => ctx.setProp(arr, i, a));
  const r = cell.serialize(arr, maxBytes);
  arr.dispose();
  if (r.error) {
    r.error.dispose();
    return "its arguments could not be serialised";
  }
  const text = cell.svc.typeof(r.value) === "string" ? cell.svc.getString(r.value) : undefined;
  r.value.dispose();
  if (text === undefined) return tooLarge(maxBytes);
  return decodeValue(text) as unknown[];
}

/**
 * No arguments, or only finite numbers other than -0, booleans and null: read on the host, with the
 * same answer and the same size check as the service's fast path (the JSON text of the array), so a
 * call such as `sleep(1000)` needs no service realm in its runtime. Anything else: undefined.
 */
function plainPrimitives(ctx: QuickJSContext, args: QuickJSHandle[], maxBytes: number): unknown[] | string | undefined {
  const out: unknown[] = [];
  for (const a of args) {
    const type = ctx.typeof(a);
    if (type === "number") {
      const n = ctx.getNumber(a);
      if (!Number.isFinite(n) || Object.is(n, -0)) return undefined;
      out.push(n);
    } else if (type === "boolean") out.push(ctx.dump(a) as boolean);
    else if (type === "object" && ctx.sameValue(a, ctx.null)) out.push(null);
    else return undefined;
  }
  if (JSON.stringify(out).length > maxBytes) return tooLarge(maxBytes);
  return out;
}

const tooLarge = (maxBytes: number): string =>
  `its arguments are larger than ${maxBytes} bytes (limits.maxResultBytes)`;
