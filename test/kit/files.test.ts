import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mimeTypeOf } from "../../src/kit/files.ts";

describe("mimeTypeOf", () => {
  it("guesses MIME types from file names, case-insensitively, octet-stream when unknown", () => {
    assert.equal(mimeTypeOf("a/b.PNG"), "image/png");
    assert.equal(mimeTypeOf("x.csv"), "text/csv");
    assert.equal(mimeTypeOf("plot.svg"), "image/svg+xml");
    assert.equal(mimeTypeOf("noext"), "application/octet-stream");
    assert.equal(mimeTypeOf("dir.png/noext"), "application/octet-stream");
    assert.equal(mimeTypeOf("x.unknownext"), "application/octet-stream");
  });
});
