// A tool output as content parts (MCP's shape): files and display images as images, the rest of the
// display items as structured content.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolContent } from "../../../src/adapters/tools/content.ts";

describe("toolContent", () => {
  it("puts display images after the files' parts and the other types in structuredContent", () => {
    const out = toolContent({
      isError: false,
      text: "ok",
      files: [{ path: "a.png", mimeType: "image/png", size: 3, base64: "AAAA" }],
      results: [
        { data: { "text/plain": "fig", "image/png": "BBBB" }, main: false },
        { data: { "text/plain": "t", "text/html": "<table></table>" }, main: true },
      ],
    });
    assert.deepEqual(out.content, [
      { type: "text", text: "ok" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "image", data: "BBBB", mimeType: "image/png" },
    ]);
    assert.deepEqual(out.structuredContent, {
      results: [
        { data: { "text/plain": "fig" }, main: false },
        { data: { "text/plain": "t", "text/html": "<table></table>" }, main: true },
      ],
    });
    assert.equal(out.isError, undefined);
  });

  it("no display items: no structured content", () => {
    const out = toolContent({ isError: true, text: "error", files: [], results: [] });
    assert.deepEqual(out, { content: [{ type: "text", text: "error" }], isError: true });
  });
});
