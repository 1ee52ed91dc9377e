// What the globals installed in a user context call into: the run they currently answer to. Types
// only, in a room of their own so that the runtime's installer can name them without importing the
// Guest that uses it.

import type { QuickJSHandle } from "quickjs-emscripten-core";

/** The part of a run the installed globals talk to. */
export interface GuestRunHooks {
  /** `indent` prefixes every printed line (console.group). */
  console(stream: "stdout" | "stderr", args: QuickJSHandle[], indent: string): void;
  /** Marks a timer as not keeping the run alive by itself (AbortSignal.timeout). */
  unrefTimer(id: number): void;
  setTimer(args: QuickJSHandle[], repeat: boolean): QuickJSHandle;
  clearTimer(id: QuickJSHandle | undefined): void;
  queueMicrotask(fn: QuickJSHandle | undefined): void;
  fs(op: FsOp, args: QuickJSHandle[]): QuickJSHandle | undefined;
  hostCall(name: string, args: QuickJSHandle[]): QuickJSHandle;
  /** One display item's JSON, as the display family built it (parsed and counted by the run). */
  display(json: string): void;
}

export type FsOp =
  "readFileSync" | "writeFileSync" | "appendFileSync" | "existsSync" | "readdirSync" | "unlinkSync" | "mkdirSync";
