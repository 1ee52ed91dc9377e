// Pyodide's Module object in the checkpoint: locked against new properties, so the reset's proof that
// its ~6,500 own properties are the recorded ones needs no enumeration. Part of the sidecar process
// (it imports nothing).
//
// Listing the keys of an object that large (Reflect.ownKeys sorts them by insertion) was a quarter of
// every reset (≈1–1.5 ms of ≈6). After `Object.preventExtensions`, which nothing can undo, no key can
// be added — by Pyodide, by the guest, by anything — so the own keys can only be the recorded ones
// minus deleted ones, in the recorded order (a deleted key cannot come back). The proof is then:
// still not extensible, every recorded key still an own property, every value the recorded one. That
// is the same statement the full comparison made, enforced by the engine instead of enumerated.
//
// What this blocks besides: a run (or a guest that reached Module) adding a property now throws where
// it is added instead of being deleted after the run. A deleted property cannot be put back: the
// reset says so and the sidecar retires.

/**
 * Properties Pyodide adds to Module on first use rather than at load (found by reading
 * pyodide.asm.mjs: every `Module.x = …` outside its start-up). They are made here, before the
 * checkpoint, exactly as Pyodide would make them, so a run that needs them finds them: after the lock
 * an assignment to a property that does not exist throws (the file is strict-mode ESM).
 */
function addLazyProperties(m: Record<string, unknown>): void {
  // Made by the first conversion of a long ASCII string to JavaScript (a file read, print of ≥ 64 chars).
  if (!Object.hasOwn(m, "_asciiTextDecoder")) m._asciiTextDecoder = new TextDecoder("latin1");
  // Set and deleted around JSPI stack switching (`run_sync`): absent reads the same as undefined.
  if (!Object.hasOwn(m, "stackStop")) m.stackStop = undefined;
  if (!Object.hasOwn(m, "syncify_error")) m.syncify_error = undefined;
}

/** Makes Module's lazy properties and locks it against new ones; call before recording it. */
export function lockModule(module: object): void {
  addLazyProperties(module as Record<string, unknown>);
  Object.preventExtensions(module);
}

/**
 * What differs between a locked Module and the record (its keys and values; `views` are indexes of
 * the memory views, proven to view `buffer` rather than compared by identity), or undefined.
 */
export function lockedModuleDifference(
  module: object,
  keys: readonly (string | symbol)[],
  values: readonly unknown[],
  views: ReadonlySet<number>,
  buffer: ArrayBufferLike,
): string | undefined {
  if (Object.isExtensible(module)) return "Module is not locked against new properties";
  const m = module as Record<string | symbol, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (!Object.hasOwn(m, k)) return `Module.${String(k).slice(0, 60)} was deleted`;
    const v = m[k];
    if (views.has(i) ? (v as ArrayBufferView).buffer !== buffer : !Object.is(v, values[i]))
      return `Module.${String(k).slice(0, 60)}`;
  }
  return undefined;
}
