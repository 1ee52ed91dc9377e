// What a command runs with: the sandbox, the workspace, where it is, and where its output goes. Types
// only, so the command runner and the built-ins can both name them without importing each other.

import type { Offer } from "../../options/index.ts";
import type { Sandbox } from "../../sandbox.ts";
import type { Workspace } from "./workspace.ts";

export type Stream = "stdout" | "stderr";

export interface CommandContext {
  sandbox: Sandbox;
  workspace: Workspace;
  /** The working directory as a workspace key ("" is the base directory). */
  cwd: string;
  /** Makes `key` the session's working directory for its next commands (`cd`). */
  chdir: (key: string) => void;
  /** The working directory before the last `cd` (for `cd -`), once there was one. */
  oldCwd: string | undefined;
  env: Record<string, string>;
  /** What a command's run may use (the session's limits and Python engine): requests are made from it. */
  offer: Offer;
  signal: AbortSignal;
  write: (stream: Stream, text: string) => void;
}
