// The module instances sessions run in: one per session, so that a session's QuickJS state is a whole
// linear memory that can be taken and put back (snapshot.ts), and so that no stateless run ever shares
// a module with a session. Two spares are kept ready once asked for, each refilled in the background:
// one with a fresh session built in it (the service realm's evaluation is most of a session's cost),
// which opening a session takes as it is, and a bare one that forking or resuming writes a whole
// memory over (its non-zero pages known, so only those are zeroed). WASM memory is a whole number of
// 64 KiB pages, so the 4 KiB pages always fill it.

import type { WasmModuleSource } from "../../../core/types.ts";
import { Guest } from "./guest.ts";
import { WasmModule, type ContextLayout } from "./modules.ts";

/** A module instance, with (`guest`) a fresh session already built in it, or bare. */
interface Spare {
  module: WasmModule;
  guest: Guest | undefined;
}

export class SessionModules {
  readonly #wasmModule: WasmModuleSource | undefined;
  readonly #spares: { fresh: Promise<Spare> | undefined; bare: Promise<Spare> | undefined } = {
    fresh: undefined,
    bare: undefined,
  };
  #closed = false;
  /** The JSContext offsets, found by the first instance and reused (they are the build's). */
  #layout: ContextLayout | undefined;
  /** Session modules handed out and not yet given back (for tests: nothing may leak). */
  live = 0;

  constructor(wasmModule?: WasmModuleSource) {
    this.#wasmModule = wasmModule;
  }

  /** A spare: a module instance (its fresh session built, for `fresh`), then its non-zero pages found. */
  async #build(kind: "fresh" | "bare"): Promise<Spare> {
    const module = await WasmModule.create(
      () => undefined,
      () => !this.#closed,
      this.#wasmModule,
      this.#layout,
    );
    this.#layout ??= module.layout;
    let guest: Guest | undefined;
    if (kind === "fresh") {
      const cell = module.takeCell();
      guest = new Guest(cell, cell.takeContext());
    }
    // Only a bare instance is ever written over (a fresh one runs its own session and is dropped).
    if (kind === "bare") module.dirtyPages = nonZeroPages(module.memory.buffer);
    return { module, guest };
  }

  async #take(kind: "fresh" | "bare"): Promise<Spare> {
    const next = this.#spares[kind] ?? this.#build(kind);
    this.#spares[kind] = undefined;
    const spare = await next;
    this.live++;
    if (!this.#closed) {
      // Built after the current macrotask: the caller's work goes first.
      const refill = new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => this.#build(kind));
      refill.catch(() => {
        if (this.#spares[kind] === refill) this.#spares[kind] = undefined;
      });
      this.#spares[kind] = refill;
    }
    return spare;
  }

  /** A fresh session in a module instance of its own; give the module back with `release`. */
  async fresh(): Promise<Guest> {
    return (await this.#take("fresh")).guest!;
  }

  /** A pristine module instance for a restore (its memory is about to be overwritten whole). */
  async forRestore(): Promise<WasmModule> {
    return (await this.#take("bare")).module;
  }

  /** A session's module is done with: it takes no runs and its memory goes with its last reference. */
  release(module: WasmModule): void {
    this.live--;
    module.retire();
  }

  close(): void {
    this.#closed = true;
    this.#spares.fresh = this.#spares.bare = undefined;
  }
}

const PAGE = 4096;
const CHUNK = 64 * 1024;

/** Node's Buffer where there is one: its `equals` is a native memcmp, ~8× the loop below on 16 MiB. */
interface Bytes {
  subarray(start: number, end: number): Bytes;
  equals(other: Bytes): boolean;
}
const NodeBuffer = (globalThis as unknown as { Buffer?: { from(b: ArrayBuffer): Bytes; alloc(n: number): Bytes } })
  .Buffer;
const ZERO_CHUNK = NodeBuffer?.alloc(CHUNK);

/** The 4 KiB pages of `memory` that hold a non-zero byte (a 64 KiB run of zeros is skipped whole). */
function nonZeroPages(memory: ArrayBuffer): number[] {
  const out: number[] = [];
  if (NodeBuffer && ZERO_CHUNK) {
    const bytes = NodeBuffer.from(memory);
    const zeroPage = ZERO_CHUNK.subarray(0, PAGE);
    for (let c = 0; c < memory.byteLength; c += CHUNK) {
      const end = Math.min(c + CHUNK, memory.byteLength);
      if (end - c === CHUNK && bytes.subarray(c, end).equals(ZERO_CHUNK)) continue;
      for (let at = c; at < end; at += PAGE) if (!bytes.subarray(at, at + PAGE).equals(zeroPage)) out.push(at / PAGE);
    }
    return out;
  }
  const words = new Int32Array(memory);
  const per = PAGE / 4;
  for (let p = 0; p * per < words.length; p++) {
    let acc = 0;
    for (let i = p * per, end = i + per; i < end; i++) acc |= words[i]!;
    if (acc !== 0) out.push(p);
  }
  return out;
}
