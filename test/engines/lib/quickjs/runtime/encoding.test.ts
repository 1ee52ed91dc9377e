// TextEncoder/TextDecoder and atob/btoa against Node's, with WPT-style cases (encoding/ and html/webappapis/atob).
import { describe } from "node:test";
import { parity } from "./parity.ts";

describe("TextEncoder, TextDecoder, atob and btoa behave like Node's", () => {
  parity([
    ["encode ASCII, 2-, 3- and 4-byte", `new TextEncoder().encode("aé€😀")`],
    ["encode lone surrogates as U+FFFD", `new TextEncoder().encode("a\\ud800b\\udc00")`],
    ["encode nothing", `[new TextEncoder().encode(), new TextEncoder().encode(""), new TextEncoder().encoding]`],
    [
      "encodeInto stops at a whole character",
      `(() => { const d = new Uint8Array(5); const r = new TextEncoder().encodeInto("a€😀", d); return [r, d]; })()`,
    ],
    [
      "encodeInto a view of a detached buffer writes nothing (WPT's check detaches with a MessageChannel)",
      `(() => { const b = new ArrayBuffer(10); const v = new Uint8Array(b); structuredClone(b, { transfer: [b] }); const e = new TextEncoder(); return [b.byteLength, e.encodeInto("", v), e.encodeInto("test", v)]; })()`,
    ],
    [
      "decode UTF-8",
      `new TextDecoder().decode(new Uint8Array([0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80]))`,
    ],
    [
      "decode replaces invalid bytes",
      `new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98, 0x41, 0xed, 0xa0, 0x80, 0xc0, 0xaf]))`,
    ],
    [
      "decode strips the BOM",
      `[new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])).length]`,
    ],
    ["fatal throws a TypeError", `new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff]))`],
    [
      "fatal accepts valid input",
      `new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xe2, 0x82, 0xac]))`,
    ],
    [
      "stream joins split characters",
      `(() => { const d = new TextDecoder(); const b = new TextEncoder().encode("€😀é"); let s = ""; for (const x of b) s += d.decode(new Uint8Array([x]), { stream: true }); return s + d.decode(); })()`,
    ],
    [
      "stream end flushes an incomplete sequence",
      `(() => { const d = new TextDecoder(); return d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) + "|" + d.decode(); })()`,
    ],
    [
      "decodes ArrayBuffer, DataView and offsets",
      `(() => { const b = new TextEncoder().encode("hello").buffer; return [new TextDecoder().decode(b), new TextDecoder().decode(new DataView(b, 1, 3)), new TextDecoder().decode(new Uint8Array(b, 2))]; })()`,
    ],
    [
      "labels",
      `[new TextDecoder("UTF8").encoding, new TextDecoder(" utf-8 ").encoding, new TextDecoder("utf-16le").encoding, new TextDecoder("latin1").encoding]`,
    ],
    ["unknown label is a RangeError", `new TextDecoder("klingon")`],
    [
      "utf-16le and windows-1252",
      `[new TextDecoder("utf-16le").decode(new Uint8Array([0x41, 0, 0xac, 0x20])), new TextDecoder("latin1").decode(new Uint8Array([0x41, 0x80, 0xe9, 0x9f]))]`,
    ],
    ["bad input is a TypeError", `new TextDecoder().decode("text")`],
    [
      "btoa and atob round trip",
      `[btoa(""), btoa("f"), btoa("fo"), btoa("foo"), btoa("\\xff\\xfe"), atob("Zm9v"), atob("Zm8="), atob("Zm8"), atob(" Z m 9 v\\n")]`,
    ],
    ["btoa rejects characters above U+00FF", `btoa("€")`],
    ["atob rejects bad input", `atob("Zm9v!")`],
    ["atob rejects a bad length", `atob("Z")`],
    ["atob rejects misplaced padding", `atob("Zm=9")`],
    ["btoa coerces its argument", `[btoa(null), btoa(12), btoa(undefined)]`],
  ]);
});
