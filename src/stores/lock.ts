// Holding a stored session's lock for the length of one run: taken with a bounded wait (a session
// locked elsewhere is retried with backoff, then refused as busy), its lease renewed while the run
// goes, and a way to ask, before the run's state is saved, whether it is still ours. What this does
// not block: a holder whose process stalls past its lease loses the lock to the next caller; it finds
// out at `confirm()` and must not save (SessionBusyError "lost"). Between a successful `confirm()` and
// the save there is a window as long as one store write; the lease (seconds) is far longer.

import { SessionBusyError } from "../core/errors.ts";
import type { SessionStore } from "./store.ts";

export interface LockTimes {
  /** How long the lock lasts without renewal (a holder that dies frees it after this). */
  leaseMs: number;
  /** How long to wait for a lock someone else holds before giving up as busy. */
  waitMs: number;
}

export interface HeldSessionLock {
  /** Renews the lease once more and says whether the lock is still held (false: do not save). */
  confirm(): Promise<boolean>;
  /** Stops renewing and gives the lock up. Idempotent. */
  release(): Promise<void>;
}

/**
 * Takes the lock on `id`, waiting at most `waitMs`; throws SessionBusyError("busy") past that, and
 * SessionBusyError("aborted") as soon as `signal` aborts (a cancelled call must not keep polling the store, nor
 * take the lock after its caller has gone: a lock taken as the signal fires is given straight back).
 */
export async function holdSessionLock(
  store: SessionStore,
  id: string,
  times: LockTimes,
  signal?: AbortSignal,
): Promise<HeldSessionLock> {
  const deadline = Date.now() + times.waitMs;
  let pause = 10;
  for (;;) {
    if (signal?.aborted) throw waitAborted(signal.reason);
    const lock = await store.lock(id, times.leaseMs);
    if (lock && signal?.aborted) {
      await lock.release().catch(() => undefined); // else it expires with its lease
      throw waitAborted(signal.reason);
    }
    if (lock) return renewing(lock, times.leaseMs);
    const left = deadline - Date.now();
    if (left <= 0)
      throw new SessionBusyError(
        "busy",
        `the session is busy: another call on it (here or on another replica) held it for more than ${times.waitMs} ms; nothing was run, retry later`,
      );
    await pauseUnlessAborted(Math.min(pause, left), signal);
    pause = Math.min(pause * 2, 200);
  }
}

const waitAborted = (reason: unknown) =>
  new SessionBusyError("aborted", "the call was cancelled while it waited for the session's lock; nothing was run", {
    cause: reason,
  });

/** Resolves after `ms`, or at once when `signal` aborts (the loop above then throws). */
function pauseUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function renewing(lock: NonNullable<Awaited<ReturnType<SessionStore["lock"]>>>, leaseMs: number): HeldSessionLock {
  let held = true;
  // A third of the lease: two renewals may fail (a slow store) before the lease runs out.
  const timer = setInterval(
    () => {
      lock.extend(leaseMs).then(
        (ok) => void (held &&= ok),
        () => undefined, // a store error now is not a loss yet; confirm() asks again
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  let released = false;
  return {
    async confirm() {
      if (!held) return false;
      held = await lock.extend(leaseMs).catch(() => false);
      return held;
    },
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      await lock.release();
    },
  };
}
