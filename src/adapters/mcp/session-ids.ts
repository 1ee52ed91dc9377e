// The ids of stored MCP sessions and of their forks: minted by the server and authenticated, so a
// client cannot make one up. An id keeps the form of a UUID (what clients and the `session` argument
// expect) and carries 64 random bits and a 64-bit tag: HMAC-SHA256 under a key derived from the
// sandbox's `sessions.key`, which every process reading the store shares, so any replica checks an id
// another one minted, with nothing stored. A fork's tag also covers the id of the MCP session that made
// it: a fork id is good only together with its owner's session id.
//
// What this holds up: the per-client in-flight cap and `maxSessions` count ids the server issued, and
// a session's records (its own and its forks') are attributable to it, for its quota.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const UUID_FORM = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;

export class SessionIds {
  readonly #key: Buffer;

  /** `sessionsKey`: the sandbox's `sessions.key`; the ids' key is derived from it, for this use only. */
  constructor(sessionsKey: Uint8Array) {
    this.#key = createHmac("sha256", sessionsKey).update("wasmcell mcp session ids v1").digest();
  }

  /** A new MCP session id. */
  session(): string {
    return this.#mint("session", "");
  }

  /** Whether `id` is an MCP session id this deployment minted. */
  isSession(id: string): boolean {
    return this.#check(id, "session", "");
  }

  /** A new id for a fork made by MCP session (or stdio session name) `owner`. */
  fork(owner: string): string {
    return this.#mint("fork", owner);
  }

  /** Whether `id` is a fork that `owner` made. */
  isForkOf(owner: string, id: string): boolean {
    return this.#check(id, "fork", owner);
  }

  #tag(kind: string, owner: string, nonce: Buffer): Buffer {
    return createHmac("sha256", this.#key).update(`${kind}\0${owner}\0`).update(nonce).digest().subarray(0, 8);
  }

  #mint(kind: string, owner: string): string {
    const nonce = randomBytes(8);
    const hex = Buffer.concat([nonce, this.#tag(kind, owner, nonce)]).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  #check(id: string, kind: string, owner: string): boolean {
    const parts = UUID_FORM.exec(id);
    if (!parts) return false;
    const bytes = Buffer.from(parts.slice(1).join(""), "hex");
    return timingSafeEqual(bytes.subarray(8), this.#tag(kind, owner, bytes.subarray(0, 8)));
  }
}
