// The shapes a runtime family is made of, and what installing one needs of a guest context. Types
// only, so the family files, the source table and the installer can all name them without importing
// one another.

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { Cell } from "../cell.ts";
import type { GuestRunHooks } from "../hooks.ts";
import type { Platform } from "./platform.ts";

export type Param = "string" | "optString" | "longString" | "number" | "bytes";
export type Out = string | number | Uint8Array | undefined;

/** A host function as a family sees it: typed data in, data out. */
export interface Binding {
  params: readonly Param[];
  fn: (p: Platform, ...args: never[]) => Out;
}

export interface FamilySource {
  /** A function expression `(host, internals, global) => void` evaluated in the user's context. */
  source: string;
  /** The host functions the family's `host` object has. */
  bindings?: Record<string, Binding>;
}

/** What installing the runtime needs of a user context (guest.ts's Guest is one). */
export interface RuntimeTarget {
  readonly cell: Cell;
  readonly ctx: QuickJSContext;
  hooks: GuestRunHooks | undefined;
  consoleIndent: string;
  keep(handle: QuickJSHandle): void;
  /** A user-realm function whose body is the host function `key` names (guest.ts's table). */
  newHostFunction(name: string, key: string): QuickJSHandle;
}
