// The WebAssembly function table in the checkpoint: every entry's identity, not only the length.
// Part of the sidecar process (it imports nothing).
//
// The table holds every function pointer the interpreter calls through (a C call through a pointer is
// `call_indirect` on an index of this table): Python's built-ins, type slots, the allocator's hooks.
// It lives outside the linear memory the reset copies back, and JavaScript can write it
// (`table.set`). A guest that reached the WebAssembly.Instance once replaced `abs` with `len` there,
// and a length check alone would have carried that into every later run of the sidecar. A changed
// entry cannot be trusted to be put back (the run may also have changed what the saved function
// does), so any difference retires the sidecar. Entries are compared by identity: V8 hands out one
// JavaScript function object per table entry, so `table.get(i) === saved[i]` holds exactly while
// entry i is what it was. The first walk creates those objects (once, at the checkpoint).

/** The part of WebAssembly.Table this reads (the project's TS libs carry no WebAssembly types). */
export interface WasmTable {
  readonly length: number;
  get(index: number): unknown;
}

/** Every entry of the table, in order. */
export function recordTable(table: WasmTable): unknown[] {
  const entries = new Array<unknown>(table.length);
  for (let i = 0; i < entries.length; i++) entries[i] = table.get(i);
  return entries;
}

/** Why the table is not the recorded one (the first difference), or undefined. */
export function tableDifference(table: WasmTable, saved: readonly unknown[]): string | undefined {
  if (table.length !== saved.length)
    return `the run grew the WASM function table (dynamic code): ${saved.length} → ${table.length} entries`;
  for (let i = 0; i < saved.length; i++) {
    if (table.get(i) !== saved[i]) return `the run replaced entry ${i} of the WASM function table`;
  }
  return undefined;
}
