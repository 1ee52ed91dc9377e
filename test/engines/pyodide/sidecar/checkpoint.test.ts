// The checkpoint's memory record and restore (sidecar/checkpoint.ts), on a plain WebAssembly.Memory:
// after a restore the memory is byte-identical to what was recorded, whatever a run wrote (stored
// blocks, blocks that were zero, memory grown past the record), and only differing blocks are written.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordMemory, restoreMemory } from "../../../../src/engines/pyodide/sidecar/checkpoint.ts";

const PAGE = 65536;

// The TS libs this project uses carry no WebAssembly declarations; this is the little we touch.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (d: object) => WasmMemory } }).WebAssembly;

function memoryWith(pages: number): { memory: WasmMemory; heap: () => Uint8Array } {
  const memory = new Memory({ initial: pages, maximum: pages * 4 });
  return { memory, heap: () => new Uint8Array(memory.buffer) };
}

describe("pyodide checkpoint: the memory, block by block", () => {
  it("stores only the blocks that are not all zeros", () => {
    const { heap } = memoryWith(8);
    heap()[3 * PAGE + 17] = 1;
    heap()[8 * PAGE - 1] = 2;
    const rec = recordMemory(heap());
    assert.equal(rec.size, 8 * PAGE);
    assert.deepEqual(
      rec.blocks.map((b) => b !== undefined),
      [false, false, false, true, false, false, false, true],
    );
  });

  it("a restore brings back every byte and writes only the blocks that differ", () => {
    const { heap } = memoryWith(16);
    for (let i = 0; i < 8 * PAGE; i += 13) heap()[i] = i & 255; // first half data, second half zeros
    const pristine = heap().slice();
    const rec = recordMemory(heap());
    assert.deepEqual(restoreMemory(heap(), rec), { copied: 0 });
    heap()[5] = 0xff; // a stored block
    heap()[2 * PAGE + 100] = 0xee; // another, same restore
    heap()[12 * PAGE] = 7; // a block that was zero
    heap()[16 * PAGE - 1] = 9; // the last byte
    assert.deepEqual(restoreMemory(heap(), rec), { copied: 4 });
    assert.equal(Buffer.compare(heap(), pristine), 0);
  });

  it("memory grown past the record reads as zero after the restore", () => {
    const { memory, heap } = memoryWith(4);
    heap()[10] = 1;
    const rec = recordMemory(heap());
    memory.grow(3);
    heap().fill(0x41, 4 * PAGE);
    heap()[10] = 2;
    assert.deepEqual(restoreMemory(heap(), rec), { copied: 4 });
    assert.equal(heap()[10], 1);
    assert.equal(
      heap()
        .subarray(4 * PAGE)
        .every((b) => b === 0),
      true,
    );
    assert.deepEqual(restoreMemory(heap(), rec), { copied: 0 });
  });
});
