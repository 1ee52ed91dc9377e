// crypto.getRandomValues, randomUUID and crypto.subtle (digest, HMAC) against Node's (WebCrypto cases).
import { describe } from "node:test";
import { parity } from "./parity.ts";

const hex = `(b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("")`;

describe("crypto behaves like Node's", () => {
  parity([
    [
      "getRandomValues fills and returns its argument",
      `(() => { const a = new Uint32Array(8); const r = crypto.getRandomValues(a); return [r === a, a.some((x) => x !== 0)]; })()`,
    ],
    ["getRandomValues over 65536 bytes is QuotaExceededError", `crypto.getRandomValues(new Uint8Array(65537))`],
    ["getRandomValues refuses floats", `crypto.getRandomValues(new Float64Array(2))`],
    ["getRandomValues of 65536 bytes works", `crypto.getRandomValues(new Uint8Array(65536)).length`],
    [
      "two random arrays differ",
      `(() => { const a = crypto.getRandomValues(new Uint8Array(16)), b = crypto.getRandomValues(new Uint8Array(16)); return a.join() !== b.join(); })()`,
    ],
    [
      "randomUUID is a v4 UUID",
      `[/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()), crypto.randomUUID() !== crypto.randomUUID()]`,
    ],
    [
      "digest SHA-1/256/384/512",
      `Promise.all(["SHA-1", "SHA-256", "SHA-384", "SHA-512"].map(async (a) => (${hex})(await crypto.subtle.digest(a, new TextEncoder().encode("abc")))))`,
    ],
    [
      "digest takes an algorithm object, any case, any BufferSource",
      `Promise.all([crypto.subtle.digest({ name: "sha-256" }, new Uint8Array([1, 2, 3]).buffer), crypto.subtle.digest("SHA-256", new DataView(new Uint8Array([9, 1, 2, 3]).buffer, 1))]).then((r) => r.map(${hex}))`,
    ],
    ["digest of nothing", `crypto.subtle.digest("SHA-256", new Uint8Array(0)).then(${hex})`],
    ["digest of an unknown algorithm rejects NotSupportedError", `crypto.subtle.digest("MD5", new Uint8Array(1))`],
    ["digest of a string rejects TypeError", `crypto.subtle.digest("SHA-256", "abc")`],
    [
      "HMAC sign and verify (RFC 4231 case 2)",
      `(async () => { const enc = new TextEncoder(); const k = await crypto.subtle.importKey("raw", enc.encode("Jefe"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]); const sig = await crypto.subtle.sign("HMAC", k, enc.encode("what do ya want for nothing?")); return [(${hex})(sig), await crypto.subtle.verify("HMAC", k, sig, enc.encode("what do ya want for nothing?")), await crypto.subtle.verify("HMAC", k, sig, enc.encode("other")), k.type, k.algorithm, k.extractable, k.usages]; })()`,
    ],
    [
      "HMAC with SHA-512 and SHA-1",
      `(async () => { const k5 = await crypto.subtle.importKey("raw", new Uint8Array(20).fill(0x0b), { name: "HMAC", hash: { name: "SHA-512" } }, true, ["sign"]); const k1 = await crypto.subtle.importKey("raw", new Uint8Array([1, 2]), { name: "HMAC", hash: "SHA-1" }, true, ["sign"]); const d = new TextEncoder().encode("Hi There"); return [(${hex})(await crypto.subtle.sign("HMAC", k5, d)), (${hex})(await crypto.subtle.sign({ name: "HMAC" }, k1, d)), (${hex})(await crypto.subtle.exportKey("raw", k1))]; })()`,
    ],
    [
      "generateKey HMAC",
      `crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign"]).then(async (k) => [k.algorithm, (await crypto.subtle.exportKey("raw", k)).byteLength])`,
    ],
    [
      "exporting a non-extractable key rejects",
      `crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]).then((k) => crypto.subtle.exportKey("raw", k))`,
    ],
    [
      "signing without the usage rejects",
      `crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]).then((k) => crypto.subtle.sign("HMAC", k, new Uint8Array(1)))`,
    ],
  ]);
});
