// The checkpoint's record of the sidecar's linear memory, and the reset that proves the memory equal
// to it. Its own room (checkpoint.ts holds the rest of the inventory and re-exports these).

// Compared block by block, only differing blocks copied back.
// A run writes a small part of the ~38 MB (print(1): ~90 of 577 blocks of 64 KiB), so the reset
// compares every block with the record and copies back only those that differ. Copying the whole
// memory reads and writes every page; comparing only reads, and a block that was all zeros at the
// checkpoint (a third of them: free heap) is compared against one zero block that stays in the CPU's
// cache, so it costs one stream of memory, not two, and is not stored at all (≈13 MB less per
// sidecar). Blocks of 64 KiB, measured against 4–256 KiB: smaller pay per call, larger copy more
// than changed. Comparing is memory-bound, so the gain is the zero blocks and the writes not done.
//
// Why this is a proof and not a "reset what we know about": every byte of the checkpoint's range is
// compared, none is skipped on a guess. A block that compared equal was, at that instant, the
// checkpoint's bytes; a block that differed is overwritten with the checkpoint's bytes and compared
// again. Nothing can write to the memory in between: the sidecar is one thread, the guest is not
// running, and this is the last step of the reset that calls into WASM (restoreCheckpoint runs it
// after everything else that might), so the whole range equals the checkpoint when it returns.
export const MEMORY_BLOCK = 64 * 1024;
const ZERO_BLOCK = Buffer.alloc(MEMORY_BLOCK);

/** The memory at the checkpoint: its size, and each block's bytes (undefined: all zeros). */
export interface MemoryRecord {
  size: number;
  blocks: (Buffer | undefined)[];
}

export function recordMemory(heap: Uint8Array): MemoryRecord {
  const live = Buffer.from(heap.buffer, heap.byteOffset, heap.length);
  const blocks: (Buffer | undefined)[] = [];
  const nonZero: number[] = [];
  for (let at = 0, i = 0; at < live.length; at += MEMORY_BLOCK, i++) {
    const end = Math.min(at + MEMORY_BLOCK, live.length);
    if (live.compare(ZERO_BLOCK, 0, end - at, at, end) !== 0) nonZero.push(i);
    blocks.push(undefined);
  }
  // One allocation for all stored blocks (each block a view into it).
  const store = Buffer.allocUnsafeSlow(nonZero.length * MEMORY_BLOCK);
  let used = 0;
  for (const i of nonZero) {
    const at = i * MEMORY_BLOCK;
    const end = Math.min(at + MEMORY_BLOCK, live.length);
    live.copy(store, used, at, end);
    blocks[i] = store.subarray(used, used + end - at);
    used += end - at;
  }
  return { size: live.length, blocks };
}

/**
 * Makes `heap` byte-identical to the record in the record's range, and zero past it. Returns how many
 * blocks differed, or which block would not come back.
 */
export function restoreMemory(heap: Uint8Array, rec: MemoryRecord): { copied: number } | { failed: string } {
  const live = Buffer.from(heap.buffer, heap.byteOffset, heap.length);
  let copied = 0;
  for (let at = 0, i = 0; at < live.length; at += MEMORY_BLOCK, i++) {
    const end = Math.min(at + MEMORY_BLOCK, live.length);
    // Past the record's size: memory a run grew (WASM memory cannot shrink). It must read as zero so
    // nothing a run left there is readable by the next one (ctypes can read raw memory).
    const want = at < rec.size ? rec.blocks[i] : undefined;
    const ref = want ?? ZERO_BLOCK;
    if (live.compare(ref, 0, end - at, at, end) === 0) continue;
    if (want) live.set(want, at);
    else live.fill(0, at, end);
    copied++;
    if (live.compare(ref, 0, end - at, at, end) !== 0) return { failed: `the memory block at ${at} did not come back` };
  }
  return { copied };
}
