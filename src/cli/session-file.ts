// `wasmcell run --session FILE`: a Python session kept in a file between invocations. The first run
// starts it; each run resumes it from FILE and saves it back (0600, written to a temp file and
// renamed, so an interrupted save leaves the old one). Each invocation is its own process, so the
// snapshot must be authenticated under a key both share: WASMCELL_SESSION_KEY (at least 32
// characters), never a per-process random key.

import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, basename } from "node:path";
import type { Sandbox, Session } from "../sandbox.ts";
import { UsageError } from "./usage.ts";

export const SESSION_KEY_ENV = "WASMCELL_SESSION_KEY";

/** The key for session files, or a UsageError saying how to set one. */
export function sessionKey(env: NodeJS.ProcessEnv): string {
  const key = env[SESSION_KEY_ENV];
  if (!key || key.length < 32)
    throw new UsageError(
      `--session needs ${SESSION_KEY_ENV} (at least 32 characters): session files are authenticated with it, and each invocation is a new process`,
    );
  return key;
}

/** The session saved in `file`, resumed; or a new one when there is no such file. */
export async function openSessionFile(sandbox: Sandbox, file: string): Promise<Session> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return sandbox.session({ language: "python" });
  }
  // The same session carrying on from the last invocation: its `random` sequence too.
  return sandbox.resume(bytes, { reseed: false });
}

/** Saves the session into `file`, atomically, readable by the owner only. */
export async function saveSessionFile(session: Session, file: string): Promise<number> {
  const bytes = await session.snapshot();
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, bytes, { mode: 0o600, flag: "wx" });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return bytes.length;
}
