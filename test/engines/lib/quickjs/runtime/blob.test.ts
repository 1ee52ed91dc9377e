// Blob and File against Node's (WPT FileAPI/blob and FileAPI/file run in npm run conformance).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../../src/index.ts";
import { parity } from "./parity.ts";

const name = `(f) => { try { f(); return "no error"; } catch (e) { return e.name; } }`;

describe("Blob and File behave like Node's", () => {
  parity([
    [
      "parts: strings as UTF-8, buffers, views, Blobs",
      `(async () => { const u = new Uint8Array([1, 2, 3, 4]); const b = new Blob(["é", u.buffer, u.subarray(1, 3), new DataView(u.buffer, 3), new Blob(["x"])]); return [b.size, await b.bytes()]; })()`,
    ],
    [
      "lone surrogates become U+FFFD",
      `(async () => [await new Blob(["a\\ud800b"]).bytes(), await new Blob(["\\udc00"]).text()])()`,
    ],
    [
      "type: lowercased, emptied outside U+0020-U+007E",
      `[new Blob([], { type: "Text/HTML" }).type, new Blob([], { type: "a\\u00e5" }).type, new Blob([], { type: " x " }).type, new Blob([], { type: "a\\tb" }).type]`,
    ],
    [
      "endings: native is LF here, transparent keeps; a bad value is a TypeError",
      `(async () => { const n = ${name}; return [await new Blob(["a\\r\\nb\\rc\\n"], { endings: "native" }).text(), await new Blob(["a\\r\\nb"]).text(), n(() => new Blob([], { endings: "crlf" }))]; })()`,
    ],
    [
      "slice: negatives count from the end, positions clamp, a content type is normalised",
      `(async () => { const b = new Blob(["0123456789"], { type: "text/plain" }); const t = async (x) => [await x.text(), x.type]; return [await t(b.slice()), await t(b.slice(-3)), await t(b.slice(2, -2)), await t(b.slice(8, 2)), await t(b.slice(-100, 100)), await t(b.slice(1.5, 3.5)), await t(b.slice(NaN, Infinity, "A/B"))]; })()`,
    ],
    ["a slice of a slice", `(async () => new Blob(["abcdefgh"]).slice(2).slice(1, -1).text())()`],
    [
      "text, arrayBuffer and bytes give fresh copies",
      `(async () => { const b = new Blob([new Uint8Array([9, 8])]); const x = await b.bytes(); x[0] = 0; const ab = await b.arrayBuffer(); return [ab instanceof ArrayBuffer, new Uint8Array(ab), await b.bytes(), x]; })()`,
    ],
    [
      "bad blobParts and options are TypeErrors",
      `(() => { const n = ${name}; return [n(() => new Blob("abc")), n(() => new Blob({})), n(() => new Blob(null)), n(() => new Blob([], 1)), n(() => Blob()), n(() => new Blob([Symbol()]))]; })()`,
    ],
    [
      "class strings, lengths, prototypes",
      `[String(new Blob()), String(new File([], "f")), Blob.length, File.length, Object.getPrototypeOf(File) === Blob, new File([], "f") instanceof Blob]`,
    ],
    [
      "getters and methods check their receiver",
      `(async () => { const n = ${name}; const get = (C, k) => Object.getOwnPropertyDescriptor(C.prototype, k).get; let rejected; try { await Blob.prototype.text.call({}); } catch (e) { rejected = e.name; } return [n(() => get(Blob, "size").call({})), n(() => get(File, "name").call(new Blob())), n(() => Blob.prototype.slice.call({})), rejected]; })()`,
    ],
    [
      "File: name, lastModified (given, or now), type; two arguments required",
      `(() => { const n = ${name}; const f = new File(["ab"], "a/b.txt", { type: "TEXT/plain", lastModified: 42 }); const now = new File([], 1); return [f.name, f.size, f.type, f.lastModified, now.name, typeof now.lastModified, n(() => new File([])), new File([], "x", { lastModified: -1 }).lastModified]; })()`,
    ],
    [
      "a File's slice is a Blob",
      `(async () => { const s = new File(["hello"], "h.txt").slice(1); return [s instanceof File, s instanceof Blob, await s.text()]; })()`,
    ],
    [
      "structuredClone keeps bytes, type, name and lastModified",
      `(async () => { const f = new File(["héllo"], "n.txt", { type: "text/x", lastModified: 7 }); const c = structuredClone({ f, b: f.slice(1, 3, "a/b") }); return [c.f instanceof File, c.f !== f, c.f.name, c.f.lastModified, c.f.type, await c.f.text(), c.b instanceof File, c.b.type, await c.b.bytes()]; })()`,
    ],
  ]);
});

describe("Blob and File where Node's differ from the WebIDL the box follows", () => {
  let sandbox: Sandbox;
  before(async () => {
    // The network grant only makes Response exist; nothing is fetched.
    sandbox = await createSandbox({ network: { allow: ["blob.invalid"] } });
  });
  after(() => sandbox.close());
  const js = async (code: string) => {
    const r = await sandbox.run({ language: "javascript", code });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    return r.ok ? r.value : undefined;
  };

  it("lastModified is a WebIDL long long: truncated, 0 for NaN (Node keeps the fraction)", async () => {
    assert.deepEqual(
      await js(`[42.9, -1.5, NaN, 2 ** 70].map((m) => new File([], "f", { lastModified: m }).lastModified)`),
      [42, -1, 0, 0],
    );
  });

  it("a Blob over 2^31 - 1 bytes is a RangeError before anything is allocated", async () => {
    // 2^16 references to one 64 KiB buffer: 4 GiB of parts, well past any run's memory limit.
    const v = await js(
      `try { new Blob(new Array(1 << 16).fill(new Uint8Array(1 << 16))); "made" } catch (e) { [e.name, e.message] }`,
    );
    assert.deepEqual(v, ["RangeError", "A Blob may hold at most 2147483647 bytes"]);
  });

  it("attributes and operations are enumerable accessors and methods on the prototypes", async () => {
    assert.deepEqual(await js(`[Object.keys(Blob.prototype), Object.keys(File.prototype), Object.keys(new Blob())]`), [
      ["size", "type", "slice", "text", "arrayBuffer", "bytes"],
      ["name", "lastModified"],
      [],
    ]);
  });

  it("a Response or Request reads a Blob body, with its type; blob() gives a Blob back", async () => {
    const v = await js(`(async () => {
      const r = new Response(new File(["ab"], "f.txt", { type: "text/x" }));
      const q = new Request("http://blob.invalid/", { method: "POST", body: new Blob([new Uint8Array([1, 2])]) });
      const back = await new Response("xyz", { headers: { "content-type": "Text/Y" } }).blob();
      return [r.headers.get("content-type"), await r.text(), q.headers.has("content-type"), [...new Uint8Array(await q.arrayBuffer())], back instanceof Blob, back.type, await back.text()];
    })()`);
    assert.deepEqual(v, ["text/x", "ab", false, [1, 2], true, "text/y", "xyz"]);
  });

  it("FormData sends a File's bytes, name and type", async () => {
    const v = (await js(`(async () => {
      const fd = new FormData(); fd.append("f", new File(["hi"], "a.txt", { type: "text/plain" }));
      return new Response(fd).text();
    })()`)) as string;
    assert.match(v, /filename="a\.txt"\r\nContent-Type: text\/plain\r\n\r\nhi\r\n/);
  });
});
