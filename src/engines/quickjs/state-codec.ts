// A JavaScript session's state as bytes: the inventory (quickjs/snapshot.ts) and the linear memory,
// whose 4 KiB pages that are all zero (most of them: QuickJS's 16 MiB minimum is mostly untouched) are
// a bit in a bitmap instead of bytes, then raw deflate (level 1: it is the fastest level and the pages
// left compress well at it). Node only (node:zlib): the edge build's sessions do not snapshot.
//
// Layout before compression (little-endian):
//   "WCQJ" | inventory length u32 | inventory JSON | page count u32 | bitmap (1 bit per page) | pages
//
// Decoding is reading hostile bytes (they were stored somewhere): the inflate is capped before it
// runs, every length is checked against the bytes that are there, the inventory is bounded field by
// field (checkInventory), and nothing is written into a module until all of it passed.

import { deflateRawSync, inflateRawSync } from "node:zlib";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import type { QuickJSEngine, QuickJSSession } from "../lib/quickjs/index.ts";
import { checkInventory, WASM_PAGE, type Inventory } from "../lib/quickjs/state.ts";

const MAGIC = Buffer.from("WCQJ", "latin1");
export const PAGE = 4096;
const ZERO = Buffer.alloc(PAGE);
const MAX_INVENTORY = 1024 * 1024;

/** A memory as its non-zero pages (what a fork copies, and what the bytes carry). */
export interface Pages {
  memoryBytes: number;
  /** One bit per page, set where the page has a non-zero byte. */
  bitmap: Uint8Array;
  /** The non-zero pages, in order. */
  data: Uint8Array;
}

/** The non-zero pages of `memory`, copied (the module may run again right after). */
export function pagesOf(memory: Uint8Array): Pages {
  const view = Buffer.from(memory.buffer, memory.byteOffset, memory.length);
  const count = memory.length / PAGE;
  const bitmap = new Uint8Array(Math.ceil(count / 8));
  const used: number[] = [];
  for (let p = 0; p < count; p++) {
    if (ZERO.compare(view, p * PAGE, p * PAGE + PAGE) === 0) continue;
    bitmap[p >> 3]! |= 1 << (p & 7);
    used.push(p);
  }
  const data = new Uint8Array(used.length * PAGE);
  used.forEach((p, i) => data.set(view.subarray(p * PAGE, p * PAGE + PAGE), i * PAGE));
  return { memoryBytes: memory.length, bitmap, data };
}

const has = (pages: Pages, p: number): boolean =>
  p < pages.memoryBytes / PAGE && ((pages.bitmap[p >> 3] ?? 0) & (1 << (p & 7))) !== 0;

/**
 * Writes `pages` over `memory` (at least as large): every page the snapshot has is copied in, every
 * other page that is not already zero is zeroed, so the memory ends up byte for byte the one taken.
 * `dirty`: the only pages of `memory` that may be non-zero (a pristine module's), so the rest is not
 * read at all; undefined: every page is looked at.
 */
export function writePages(pages: Pages, memory: Uint8Array, dirty?: readonly number[]): void {
  const view = Buffer.from(memory.buffer, memory.byteOffset, memory.length);
  const count = memory.length / PAGE;
  const zeroIfDirty = (p: number) => {
    const at = p * PAGE;
    if (ZERO.compare(view, at, at + PAGE) !== 0) view.fill(0, at, at + PAGE);
  };
  if (dirty) for (const p of dirty) if (p < count && !has(pages, p)) zeroIfDirty(p);
  let next = 0;
  for (let p = 0; p < count; p++) {
    if (has(pages, p)) {
      view.set(pages.data.subarray(next * PAGE, next * PAGE + PAGE), p * PAGE);
      next++;
    } else if (!dirty) zeroIfDirty(p);
  }
}

/** The state's bytes: the inventory and the memory's pages, compressed. */
export function encodeState(inventory: Inventory, pages: Pages): Uint8Array {
  const json = Buffer.from(JSON.stringify(inventory), "utf8");
  const head = Buffer.alloc(MAGIC.length + 4);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, MAGIC.length);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(pages.memoryBytes / PAGE, 0);
  return deflateRawSync(Buffer.concat([head, json, count, pages.bitmap, pages.data]), { level: 1 });
}

const corrupt = (what: string): never => {
  throw new SnapshotRejectedError("corrupt", `its engine state: ${what}`);
};

/**
 * The inventory and pages of a state's bytes, each checked: the memory at most `maxMemoryBytes` (the
 * inflate stops there), the bitmap and pages exactly as long as the page count says.
 */
export function decodeState(bytes: Uint8Array, maxMemoryBytes: number): { inventory: Inventory; pages: Pages } {
  const maxPages = Math.floor(maxMemoryBytes / PAGE);
  const cap = MAGIC.length + 4 + MAX_INVENTORY + 4 + Math.ceil(maxPages / 8) + maxMemoryBytes;
  let raw: Buffer;
  try {
    raw = inflateRawSync(bytes, { maxOutputLength: cap });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_BUFFER_TOO_LARGE")
      throw new SnapshotRejectedError(
        "size",
        `its engine state inflates past the ${(maxMemoryBytes / 1048576).toFixed(1)} MiB of memory a session may have under limits.memoryMb here`,
      );
    return corrupt("it does not inflate");
  }
  if (raw.length < MAGIC.length + 8 || !raw.subarray(0, MAGIC.length).equals(MAGIC)) return corrupt("no state header");
  const jsonLength = raw.readUInt32LE(MAGIC.length);
  let at = MAGIC.length + 4;
  if (jsonLength > MAX_INVENTORY || at + jsonLength + 4 > raw.length) return corrupt("its inventory length");
  let json: unknown;
  try {
    json = JSON.parse(raw.subarray(at, at + jsonLength).toString("utf8"));
  } catch {
    return corrupt("its inventory is not JSON");
  }
  const claimed = (json as { memoryBytes?: unknown } | null)?.memoryBytes;
  if (typeof claimed === "number" && claimed > maxMemoryBytes)
    throw new SnapshotRejectedError(
      "size",
      `the session's memory is ${(claimed / 1048576).toFixed(1)} MiB, more than a session may have under limits.memoryMb here (${(maxMemoryBytes / 1048576).toFixed(1)} MiB)`,
    );
  const inventory = checkInventory(json, maxMemoryBytes);
  at += jsonLength;
  const count = raw.readUInt32LE(at);
  at += 4;
  if (count * PAGE !== inventory.memoryBytes || inventory.memoryBytes % WASM_PAGE !== 0)
    return corrupt("its page count does not match its memory size");
  const bitmapLength = Math.ceil(count / 8);
  if (at + bitmapLength > raw.length) return corrupt("its page map is cut short");
  const bitmap = raw.subarray(at, at + bitmapLength);
  at += bitmapLength;
  if (count % 8 !== 0 && bitmap[bitmapLength - 1]! >> (count % 8) !== 0)
    return corrupt("its page map marks pages past its memory");
  let set = 0;
  for (const b of bitmap) for (let v = b; v !== 0; v &= v - 1) set++;
  if (raw.length - at !== set * PAGE) return corrupt("its pages do not match its page map");
  return { inventory, pages: { memoryBytes: inventory.memoryBytes, bitmap, data: raw.subarray(at) } };
}

/**
 * The most linear memory a session may have where runs get `memoryMb`: the QuickJS minimum (16 MiB),
 * the limit, and the allocator slack one run may grow past it (32 MiB, lib/quickjs/run.ts). One
 * definition for both sides: a save of a larger session is refused (`size`, it stays where it is),
 * and a resume of one is refused (`size`) by a sandbox whose memoryMb it is over — a 60 MB session
 * resumed under memoryMb 16 used to carry on past the limit its resumer set.
 */
export function maxSessionMemory(memoryMb: number): number {
  return (16 + memoryMb + 32) * 1024 * 1024;
}

/**
 * A live session's state as bytes (between runs); SnapshotUnsupportedError `size` when its memory is
 * over `maxMemoryBytes` (maxSessionMemory: what a resume here would refuse).
 */
export function liveState(session: QuickJSSession, maxMemoryBytes = Number.POSITIVE_INFINITY): Promise<Uint8Array> {
  return session.capture(({ inventory, memory }) => {
    if (memory.length > maxMemoryBytes)
      throw new SnapshotUnsupportedError(
        "size",
        `the session's memory is ${(memory.length / 1048576).toFixed(1)} MiB, more than a session under limits.memoryMb may resume with (${(maxMemoryBytes / 1048576).toFixed(1)} MiB): it stays where it is`,
      );
    return encodeState(inventory, pagesOf(memory));
  });
}

/** A session of `engine` restored from state bytes (checked first; SnapshotRejectedError if refused). */
export async function restoreState(
  engine: QuickJSEngine,
  state: Uint8Array,
  maxMemoryBytes: number,
): Promise<QuickJSSession> {
  // Async: a refusal is a rejection (the worker answers it), never a throw out of its message handler.
  const { inventory, pages } = decodeState(state, maxMemoryBytes);
  return engine.restoreSession(inventory, (memory, dirty) => writePages(pages, memory, dirty));
}

/** A copy of a live session of `engine`, made on this thread: its pages are copied, never compressed. */
export async function forkState(engine: QuickJSEngine, session: QuickJSSession): Promise<QuickJSSession> {
  const { inventory, pages } = await session.capture(({ inventory, memory }) => ({
    inventory,
    pages: pagesOf(memory),
  }));
  return engine.restoreSession(inventory, (memory, dirty) => writePages(pages, memory, dirty));
}
