// What the MCP HTTP server's routes share (http.ts builds it once): settings, the server factory,
// admission, the sessions table and the replies.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/server";
import type { Refusal } from "./admission.ts";
import type { ReplyExtras } from "./http-reply.ts";
import type { CallGate, ServedClient } from "./server.ts";
import type { SessionTable } from "./sessions.ts";
import type { StoredSessions } from "./stored-sessions.ts";

export interface HttpContext {
  readonly stateless: boolean;
  readonly trustProxy: boolean;
  readonly maxSessions: number;
  readonly maxBody: number;
  /** The credential identity of every request that passed the guard (session-ids.ts). */
  readonly identity: string;
  readonly newServer: (gate?: CallGate, sessionId?: string, client?: ServedClient) => Server;
  readonly gateFor: (client: string) => CallGate;
  readonly sessions: SessionTable;
  /** 2025-11-25 sessions in a store (a sessionStore was given). */
  readonly stored: StoredSessions | undefined;
  readonly reply: (res: ServerResponse, status: number, message: string, ...rest: ReplyExtras) => void;
  readonly refuse: (res: ServerResponse, refusal: Refusal, id?: unknown) => void;
  /**
   * The request's body, read and bounded (POST only; undefined otherwise): `{ body }`, or undefined
   * when it was bad and has been answered. Read once; later calls give the same.
   */
  readonly readBody: (req: IncomingMessage, res: ServerResponse) => Promise<{ body: unknown } | undefined>;
  /**
   * Reserves in-flight places for the tool calls in `body` (a POST's, already read) for `client`,
   * released when the answer is done; false when it refused them and answered the request itself.
   */
  readonly admit: (res: ServerResponse, body: unknown, client: string) => boolean;
}
