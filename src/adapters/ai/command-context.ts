// What a command runs with: the sandbox, the workspace, where it is, and where its output goes. Types
// only, so the command runner and the built-ins can both name them without importing each other.

import type { Sandbox } from "../../sandbox.ts";
import type { Limits } from "../../core/types.ts";
import type { Workspace } from "./workspace.ts";

export type Stream = "stdout" | "stderr";

export interface CommandContext {
  sandbox: Sandbox;
  workspace: Workspace;
  /** The working directory as a workspace key ("" is the base directory). */
  cwd: string;
  env: Record<string, string>;
  limits: Partial<Limits> | undefined;
  pythonEngine: "pyodide" | "native" | undefined;
  signal: AbortSignal;
  write: (stream: Stream, text: string) => void;
}
