// Session handles: the names of stored MCP sessions, minted by the server and authenticated, so a
// client cannot make one up, and bound to the client's credential, so a handle is worthless to a
// client that does not hold the credential it was minted under.
//
// One name serves both protocol revisions. A 2026-07-28 client gets a handle back from run_code (as
// `session` in the structured content) and passes it as the `session` argument; a 2025-11-25 client
// gets one as its Mcp-Session-Id (a handle is visible ASCII, as the header requires), so both name
// the same stored sessions and a session started under one revision can be continued under the other.
//
//   wc_<root>_<self>_<tag>
//
// `self` is 64 random bits; `root` is the `self` of the session a fork was made from (its family,
// which shares one quota), equal to `self` for a session that was not forked. `tag` is 128 bits of
// HMAC-SHA256 over (credential identity, root, self) under a key derived from the sandbox's
// `sessions.key`, which every process reading the store shares: any replica checks a handle another
// one minted, with nothing stored. The credential identity is the digest of the bearer token the
// request carried (HTTP), "loopback" for a loopback server without a token, "stdio" for stdio.
//
// What this holds up: a handle forged, or minted for another credential, is not a session
// (`read` returns undefined) and nothing of that session is reached; the per-client in-flight cap
// and `maxSessions` count handles the server issued; every record is attributable to its family's
// quota. What it does not: a handle is a bearer capability within its credential — clients sharing a
// credential can use each other's handles if they learn them (give tenants separate credentials).
// Closing a session leaves a tombstone in the store (stored-sessions.ts), so a handle replayed after
// it was closed is refused rather than starting afresh.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const HANDLE = /^wc_([0-9a-f]{16})_([0-9a-f]{16})_([0-9a-f]{32})$/;

/** A checked handle: the handle itself and the root handle of its family (which owns its quota). */
export interface Handle {
  readonly handle: string;
  /** The handle of the family's first session: the owner of the family's records and quota. */
  readonly owner: string;
  /** Whether this is a family's first session (not made by fork_session). */
  readonly root: boolean;
}

export class SessionIds {
  readonly #key: Buffer;

  /** `sessionsKey`: the sandbox's `sessions.key`; the handles' key is derived from it, for this use only. */
  constructor(sessionsKey: Uint8Array) {
    this.#key = createHmac("sha256", sessionsKey).update("wasmcell mcp session handles v2").digest();
  }

  /** A new session's handle, for a client holding credential `identity`. */
  session(identity: string): string {
    const self = randomBytes(8).toString("hex");
    return this.#mint(identity, self, self);
  }

  /**
   * The one session a stdio server keeps under a durable name (`--session-name`): the same handle
   * every time, so a restarted server continues it.
   */
  named(identity: string, name: string): string {
    const self = createHmac("sha256", this.#key).update(`named\0${name}`).digest().subarray(0, 8).toString("hex");
    return this.#mint(identity, self, self);
  }

  /** A new handle in the family of `of` (a checked handle), for fork_session. */
  fork(identity: string, of: Handle): string {
    return this.#mint(identity, rootOf(of.handle), randomBytes(8).toString("hex"));
  }

  /** The handle `text` if this deployment minted it for `identity`; undefined for anything else. */
  read(identity: string, text: string): Handle | undefined {
    const parts = HANDLE.exec(text);
    if (!parts) return undefined;
    const [, root, self, tag] = parts as unknown as [string, string, string, string];
    if (!timingSafeEqual(Buffer.from(tag, "hex"), this.#tag(identity, root, self))) return undefined;
    return { handle: text, owner: root === self ? text : this.#mint(identity, root, root), root: root === self };
  }

  #tag(identity: string, root: string, self: string): Buffer {
    return createHmac("sha256", this.#key).update(`${identity}\0${root}\0${self}`).digest().subarray(0, 16);
  }

  #mint(identity: string, root: string, self: string): string {
    return `wc_${root}_${self}_${this.#tag(identity, root, self).toString("hex")}`;
  }
}

function rootOf(handle: string): string {
  return handle.slice(3, 19);
}
