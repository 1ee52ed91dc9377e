// Threat: a 2026-07-28 client names a session it was never given — a handle it made up in the right
// form, or a real one with a byte changed — to reach another client's interpreter (its variables, its
// files) or to run code that is counted against someone else's quota. Handles are minted by the server
// and tagged (HMAC under a key derived from `sessions.key`, over the credential and the handle's ids):
// anything the server did not mint is refused by run_code, fork_session and close_session, naming the
// problem, and nothing of the named session is reached.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { serveHttp, type HttpMcpServer } from "../../src/adapters/mcp/http.ts";
import { MemorySessionStore } from "../../src/stores/index.ts";
import { callModern, connectModern } from "../helpers/mcp-v2.ts";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

describe("MCP session handles: a forged handle reaches nothing", () => {
  let sandbox: Sandbox;
  let server: HttpMcpServer;
  let client: Client;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    server = await serveHttp({ sandbox, session: true, sessionStore: new MemorySessionStore() });
    client = await connectModern(server.url);
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await sandbox?.close();
  });

  test("made-up and altered handles are refused by every tool; the real session is untouched", async () => {
    const first = await callModern(client, "run_code", { language: "javascript", code: "var secret = 's3'; 1" });
    assert.equal(first.isError, false, first.text);
    const real = first.session!;
    assert.match(real, /^wc_[0-9a-f]{16}_[0-9a-f]{16}_[0-9a-f]{32}$/);
    const [, root, self, tag] = real.split("_") as [string, string, string, string];
    const forged = [
      `wc_${hex(8)}_${hex(8)}_${hex(16)}`,
      `wc_${root}_${self}_${hex(16)}`,
      `wc_${root}_${hex(8)}_${tag}`,
      `wc_${hex(8)}_${self}_${tag}`,
      `wc_${root}_${root}_${"0".repeat(32)}`,
    ];
    for (const handle of forged) {
      const run = await callModern(client, "run_code", { language: "javascript", code: "secret", session: handle });
      assert.equal(run.isError, true, handle);
      assert.match(run.text, /is not a session handle this server issued to this client/);
      assert.doesNotMatch(run.text, /s3/);
      assert.equal(run.session, undefined);
      for (const tool of ["fork_session", "close_session"]) {
        const args = tool === "fork_session" ? { language: "javascript", session: handle } : { session: handle };
        const r = await callModern(client, tool, args);
        assert.equal(r.isError, true, `${tool} ${handle}`);
        assert.match(r.text, /not a session handle this server issued to this client/);
      }
    }
    // Not a handle at all: refused by the schema before anything is looked up.
    const junk = await callModern(client, "run_code", { language: "javascript", code: "1", session: "../x" });
    assert.match(junk.text, /session must be a session id/);
    // The real session is as it was: nothing above closed, forked or ran in it.
    const still = await callModern(client, "run_code", { language: "javascript", code: "secret", session: real });
    assert.match(still.text, /value: "s3"/);
  });
});
