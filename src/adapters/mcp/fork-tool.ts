// `fork_session` and `close_session`: the tools beside `run_code` where sessions are named. fork_session
// copies one of the caller's sessions into a new one, whose handle comes back for `run_code`'s
// `session` argument; close_session (2026-07-28, where a session has no connection to end it) removes a
// session's state and retires its handle. Offered only where sessions are stored (stored-sessions.ts):
// a store given to the server, or, for 2026-07-28 clients, one in this process.

import { z } from "zod";
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import { InvalidOptionError, WasmcellError } from "../../core/errors.ts";
import type { Language } from "../../core/types.ts";
import { sessionField, toJsonSchema, zodMessage } from "../tools/run-code.ts";
import type { Handle } from "./session-ids.ts";
import type { StoredSessions } from "./stored-sessions.ts";

export const FORK_TOOL_NAME = "fork_session";
export const CLOSE_TOOL_NAME = "close_session";

/**
 * Whose sessions a call may name: `identity`, the caller's credential; `scope`, a 2025-11-25
 * connection's own session (its family only; a call without `session` means it).
 */
export interface SessionScope {
  identity: string;
  scope?: Handle;
}

export function forkTool(languages: readonly Language[], handles: boolean) {
  const schema = z
    .object({
      language: z
        .enum(languages as [Language, ...Language[]], {
          error: () => `language must be one of ${languages.map((l) => `"${l}"`).join(", ")}`,
        })
        .describe("The language whose session to copy."),
      session: handles
        ? sessionField("The session to copy, as run_code returned it.").unwrap()
        : sessionField("Optional: fork this forked session instead of this connection's own."),
    })
    .strict();
  const listed: Tool = {
    name: FORK_TOOL_NAME,
    title: "Fork a wasmcell session",
    description:
      "Copy a stateful session (its variables, imports and files) into a new, independent session and return the new session's handle (`session`). Pass it as `session` to run_code to try something in the copy; the original carries on unchanged, and neither sees the other's later changes.",
    inputSchema: toJsonSchema(schema) as Tool["inputSchema"],
    annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: false, destructiveHint: false },
  };
  const call = async (stored: StoredSessions, who: SessionScope, args: unknown): Promise<CallToolResult> => {
    const parsed = schema.safeParse(args);
    if (!parsed.success) return failed(`invalid input: ${zodMessage(parsed.error)}; nothing was forked`);
    try {
      const source = named(stored, who, parsed.data.session);
      const id = await stored.fork(who.identity, source, parsed.data.language);
      return {
        content: [
          {
            type: "text",
            text: `forked the ${parsed.data.language} session: pass session "${id}" to run_code to run in the copy`,
          },
        ],
        structuredContent: { session: id },
      };
    } catch (error) {
      if (error instanceof WasmcellError) return failed(`error: the session could not be forked: ${error.message}`);
      throw error;
    }
  };
  return { listed, call };
}

export function closeTool() {
  const schema = z.object({ session: sessionField("The session to end, as run_code returned it.").unwrap() }).strict();
  const listed: Tool = {
    name: CLOSE_TOOL_NAME,
    title: "Close a wasmcell session",
    description:
      "End a session: its variables, imports and files are removed (a session's forks go with it when it was not itself a fork) and its handle cannot be used again.",
    inputSchema: toJsonSchema(schema) as Tool["inputSchema"],
    annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: true, destructiveHint: true },
  };
  const call = async (stored: StoredSessions, who: SessionScope, args: unknown): Promise<CallToolResult> => {
    const parsed = schema.safeParse(args);
    if (!parsed.success) return failed(`invalid input: ${zodMessage(parsed.error)}; nothing was closed`);
    try {
      await stored.end(named(stored, who, parsed.data.session));
      return { content: [{ type: "text", text: `closed session "${parsed.data.session}"` }] };
    } catch (error) {
      if (error instanceof WasmcellError) return failed(`error: the session could not be closed: ${error.message}`);
      throw error;
    }
  };
  return { listed, call };
}

/** The session a call names, if the caller may name it (else InvalidOptionError saying why). */
function named(stored: StoredSessions, who: SessionScope, session: string | undefined): Handle {
  if (session === undefined && who.scope) return who.scope;
  const handle = session === undefined ? undefined : stored.ids.read(who.identity, session);
  if (!handle || (who.scope && handle.owner !== who.scope.owner))
    throw new InvalidOptionError(
      "session",
      who.scope
        ? `"${session}" is not a session of this connection: name one that fork_session returned to it`
        : `"${session}" is not a session handle this server issued to this client`,
    );
  return handle;
}

function failed(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
