// `wasmcell/sessions`: the session stores, for `sessions.store` (the disk store needs Node's file
// system, so it is not on the package root that edge runtimes load).

export { DiskSessionStore, type DiskSessionStoreOptions } from "./disk.ts";
export { MemorySessionStore } from "./memory.ts";
export type { SessionLock, SessionStore } from "./store.ts";
