// Every callback Pyodide's event loop schedules is tracked, so a stateless reset can cancel what a
// run left behind (background asyncio tasks) before the checkpoint is restored.

const pendingTimers = new Set<NodeJS.Timeout | NodeJS.Immediate>();

export function trackTimers(): void {
  const realSetTimeout = globalThis.setTimeout;
  const realSetImmediate = globalThis.setImmediate;
  const realSetInterval = globalThis.setInterval;
  globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle: NodeJS.Timeout = realSetTimeout(() => {
      pendingTimers.delete(handle);
      fn(...args);
    }, ms);
    pendingTimers.add(handle);
    return handle;
  }) as typeof setTimeout;
  globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
    const handle: NodeJS.Immediate = realSetImmediate(() => {
      pendingTimers.delete(handle);
      fn(...args);
    });
    pendingTimers.add(handle);
    return handle;
  }) as typeof setImmediate;
  globalThis.setInterval = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = realSetInterval(fn, ms, ...args);
    pendingTimers.add(handle);
    return handle;
  }) as typeof setInterval;
}

export function cancelPendingTimers(): void {
  for (const handle of pendingTimers) {
    clearTimeout(handle as NodeJS.Timeout);
    clearImmediate(handle as NodeJS.Immediate);
  }
  pendingTimers.clear();
}
