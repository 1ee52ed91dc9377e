// A guest string that crosses into a host binding arrives whole: a NUL inside it must not cut it
// short (quickjs-emscripten reads strings as C strings). Found by the WPT url suite (test/conformance/):
// `new URL("http://h/#a\0b")` came back as "http://h/#a". The cases cover the bindings a string reaches:
// URL parsing and setters, a file written from a string, and a digest of a string's bytes.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../src/index.ts";

for (const isolation of ["thread", "in-process"] as const) {
  describe(`a guest string with a NUL reaches the host whole (${isolation})`, () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await createSandbox({ javascript: { isolation } });
    });
    after(() => sandbox.close());

    it("URL parsing and setters keep what follows a NUL", async () => {
      const r = await sandbox.run({
        language: "javascript",
        code: `const u = new URL("http://h/#a\\0b"); const v = new URL("http://h/"); v.search = "x\\0y"; [u.href, v.href]`,
      });
      assert.deepEqual(r.ok && r.value, ["http://h/#a%00b", "http://h/?x%00y"]);
    });

    it("a file written from a string keeps every byte", async () => {
      const r = await sandbox.run({ language: "javascript", code: `fs.writeFileSync("f.bin", "a\\0b\\0c"); 0` });
      assert.equal(r.ok, true);
      assert.deepEqual([...(r.files[0]?.bytes ?? [])], [0x61, 0, 0x62, 0, 0x63]);
    });

    it("a digest of a string hashes all of it", async () => {
      const r = await sandbox.run({
        language: "javascript",
        code: `const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("a\\0b"));
[...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("")`,
      });
      assert.equal(r.ok && r.value, createHash("sha256").update("a\0b").digest("hex"));
    });
  });
}
