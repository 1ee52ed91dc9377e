// Each stored MCP session's quota: the bytes of all the records it owns (one per language it ran,
// one per language of each fork it made) together stay under `quotaBytes`, so no client takes the
// room of another in a store with a size budget. Kept as one small record per owner beside its
// records (key `mcp-<owner>-ledger`), under a lock of its own, so every replica sharing the store
// counts the same bytes. A record is charged when it is written bigger than it was (a smaller one
// keeps its larger charge until it grows again: the count errs on the side of the quota) and
// discharged when it is removed. Lock order: a record's lock, then its owner's ledger lock, never the
// other way round.
//
// The ledger comes from the store, which is storage, not a source of truth: it is read bounded, and
// one that does not parse counts as empty (the owner's usage is then counted afresh as it writes).

import { SessionQuotaError } from "../../core/errors.ts";
import { holdSessionLock } from "../../stores/lock.ts";
import type { SessionStore } from "../../stores/store.ts";

/** More records than one session can own (languages × forks): a ledger past it is not read. */
const MAX_RECORDS = 4096;
const MAX_LEDGER_BYTES = 1 << 20;

export interface LedgerOptions {
  store: SessionStore;
  quotaBytes: number;
  leaseMs: number;
  waitMs: number;
}

export class SessionLedgers {
  readonly #o: LedgerOptions;

  constructor(options: LedgerOptions) {
    this.#o = options;
  }

  /**
   * Charges record `key` of `owner` at `bytes` (replacing its earlier charge); throws
   * SessionQuotaError, charging nothing, when the owner's records would pass the quota.
   */
  async charge(owner: string, key: string, bytes: number): Promise<void> {
    await this.#update(owner, (records) => {
      const others = Object.entries(records).reduce((sum, [k, n]) => (k === key ? sum : sum + n), 0);
      if (others + bytes > this.#o.quotaBytes)
        throw new SessionQuotaError(
          `this call's state would make the session's stored state ${others + bytes} bytes, over this MCP session's quota of ${this.#o.quotaBytes} (sessionQuotaBytes, over all its languages and forks): it was not kept, and the session is as it was before this call; keep less state, or end forks you no longer need`,
        );
      records[key] = bytes;
    });
  }

  /** Removes record `key` from `owner`'s charges. */
  async discharge(owner: string, key: string): Promise<void> {
    await this.#update(owner, (records) => {
      delete records[key];
    });
  }

  /** The records `owner` is charged for. */
  async records(owner: string): Promise<string[]> {
    return Object.keys(parse(await this.#o.store.get(ledgerKey(owner))));
  }

  /** Removes `owner`'s ledger. */
  async forget(owner: string): Promise<void> {
    await this.#o.store.delete(ledgerKey(owner));
  }

  async #update(owner: string, change: (records: Record<string, number>) => void): Promise<void> {
    const key = ledgerKey(owner);
    const lock = await holdSessionLock(this.#o.store, key, { leaseMs: this.#o.leaseMs, waitMs: this.#o.waitMs });
    try {
      const records = parse(await this.#o.store.get(key));
      change(records);
      if (Object.keys(records).length === 0) await this.#o.store.delete(key);
      else await this.#o.store.put(key, new TextEncoder().encode(JSON.stringify({ records })));
    } finally {
      await lock.release().catch(() => undefined);
    }
  }
}

function ledgerKey(owner: string): string {
  return `mcp-${owner}-ledger`;
}

function parse(bytes: Uint8Array | undefined): Record<string, number> {
  const records = Object.create(null) as Record<string, number>;
  if (bytes === undefined || bytes.length > MAX_LEDGER_BYTES) return records;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return records;
  }
  const given = (value as { records?: unknown } | null)?.records;
  if (typeof given !== "object" || given === null) return records;
  const entries = Object.entries(given);
  if (entries.length > MAX_RECORDS) return records;
  for (const [key, n] of entries) {
    if (/^mcp-[A-Za-z0-9_-]{1,100}$/.test(key) && Number.isSafeInteger(n) && (n as number) >= 0)
      records[key] = n as number;
  }
  return records;
}
