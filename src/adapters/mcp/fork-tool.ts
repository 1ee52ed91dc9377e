// `fork_session`: copies one of the caller's stored sessions into a new one, whose id comes back for
// `run_code`'s `session` argument. Offered only where sessions are stored (serveHttp with a session
// store), because only there does a session have an id that the next call can name.

import { z } from "zod";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { WasmcellError } from "../../core/errors.ts";
import type { Language } from "../../core/types.ts";
import { sessionField, toJsonSchema, zodMessage } from "../tools/run-code.ts";
import type { StoredSessions } from "./stored-sessions.ts";

export const FORK_TOOL_NAME = "fork_session";

export function forkTool(languages: readonly Language[]) {
  const schema = z
    .object({
      language: z
        .enum(languages as [Language, ...Language[]], {
          error: () => `language must be one of ${languages.map((l) => `"${l}"`).join(", ")}`,
        })
        .describe("The language whose session to copy."),
      session: sessionField("Optional: fork this forked session instead of this connection's own."),
    })
    .strict();
  const listed: Tool = {
    name: FORK_TOOL_NAME,
    title: "Fork a wasmcell session",
    description:
      "Copy a stateful session (its variables, imports and files) into a new, independent session and return the new session's id. Pass that id as `session` to run_code to try something in the copy; the original carries on unchanged, and neither sees the other's later changes.",
    inputSchema: toJsonSchema(schema) as Tool["inputSchema"],
    annotations: { readOnlyHint: false, openWorldHint: false, idempotentHint: false, destructiveHint: false },
  };
  const call = async (stored: StoredSessions, own: string, args: unknown): Promise<CallToolResult> => {
    const parsed = schema.safeParse(args);
    if (!parsed.success) return failed(`invalid input: ${zodMessage(parsed.error)}; nothing was forked`);
    try {
      const id = await stored.fork(own, parsed.data.session, parsed.data.language);
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

function failed(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
