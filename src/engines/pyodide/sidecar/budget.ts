// How much memory a session's save or load may still use in this sidecar. Part of the sidecar process.
//
// The process runs under a memory cap (a cgroup, set by the host when it starts the sidecar), and a
// save or a load copies the whole state at least twice: a save builds the record's raw bytes and then
// their compressed copy; a load inflates the record, then writes its files into the in-memory file
// system and grows the WASM memory to the session's size. Done blind, a legal 230 MB session at
// memoryMb 600 was killed by its cgroup halfway through its save (the session was lost with it), and
// a 119 KB record of a 200 MB file could inflate a pristine sidecar past its cap. So both measure the
// work first and compare it with this headroom: what the cap leaves beside what the process holds now,
// less a margin for the collector and the compressor's own state. Work that does
// not fit is refused as `size`, before anything is copied, and the sidecar carries on as it was.
//
// What the process holds is summed from what it can see in its jail (there is no /proc there, so no
// resident set): V8's heap, the memory of every ArrayBuffer (the file system's bytes, the record's),
// the WASM memory, and a fixed allowance for Node itself and Pyodide's compiled code.
//
// The save keeps a wider margin than the load: a session that could be taken out of a sidecar can be
// put back into a pristine one of the same sandbox (which holds less than the one that held it).

import { getHeapStatistics } from "node:v8";

const MiB = 1024 * 1024;
export const SAVE_MARGIN = 96 * MiB;
export const LOAD_MARGIN = 48 * MiB;
/** Node, its libraries and Pyodide's compiled code: what the sums below do not see. */
const PROCESS_BASE = 96 * MiB;

/** Bytes the process may still use under `capBytes` (negative: none), keeping `margin` free. */
export function headroom(capBytes: number, margin: number, wasmBytes: number): number {
  const heap = getHeapStatistics();
  const held = heap.total_heap_size + heap.external_memory + wasmBytes + PROCESS_BASE;
  return capBytes - held - margin;
}

/** A byte count as MiB for a reason (one decimal). */
export function mib(bytes: number): string {
  return `${(Math.max(0, bytes) / MiB).toFixed(1)} MiB`;
}
