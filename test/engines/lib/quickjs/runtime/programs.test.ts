// Typical agent programs run in the box and in `node` as a child process: stdout must match byte for
// byte. Each program prints what it computes (console.log of strings, so formatting is not at stake
// except where the program is about console itself).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runNode } from "../../../../helpers/process.ts";
import { boxRunner } from "./parity.ts";

const PROGRAMS: Record<string, string> = {
  "date math with Intl.DateTimeFormat": `
const start = new Date(Date.UTC(2024, 0, 31, 22, 15));
const addDays = (d, n) => new Date(d.getTime() + n * 86400000);
const fmt = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
for (const n of [0, 1, 30, 45]) console.log(n, fmt.format(addDays(start, n)));
const days = Math.round((Date.UTC(2024, 11, 25) - Date.UTC(2024, 0, 1)) / 86400000);
console.log("days until xmas:", days, new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(-1, "day"));
console.log(new Date(Date.UTC(2024, 1, 29)).toLocaleDateString("en-GB", { timeZone: "UTC" }));
console.log(new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Kolkata", timeStyle: "short" }).format(start));`,
  "URL parsing": `
const links = ["https://example.com/search?q=wasm+sandbox&page=2#top", "/docs/api?x=1", "mailto:hi@example.com"];
for (const l of links) {
  const u = new URL(l, "https://base.example/");
  console.log(u.hostname, u.pathname, JSON.stringify(Object.fromEntries(u.searchParams)), u.hash || "-");
}
const u = new URL("https://api.example.com/v1/items");
u.searchParams.set("limit", "10"); u.searchParams.append("tag", "a b"); u.searchParams.append("tag", "ç");
console.log(u.toString(), u.searchParams.getAll("tag").join("|"));`,
  hashing: `
const enc = new TextEncoder();
const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
for (const alg of ["SHA-1", "SHA-256", "SHA-512"]) console.log(alg, hex(await crypto.subtle.digest(alg, enc.encode("hello world"))));
const key = await crypto.subtle.importKey("raw", enc.encode("secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
const sig = await crypto.subtle.sign("HMAC", key, enc.encode("payload"));
console.log("hmac", hex(sig), await crypto.subtle.verify("HMAC", key, sig, enc.encode("payload")));`,
  "base64 and text encoding": `
const text = "Grüße, 世界! 🎉";
const bytes = new TextEncoder().encode(text);
const b64 = btoa(String.fromCharCode(...bytes));
console.log(b64);
const back = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
console.log(back, back === text, bytes.length);
console.log(btoa("user:pass"), atob("d2FzbWNlbGw="));`,
  UUIDs: `
const ids = Array.from({ length: 5 }, () => crypto.randomUUID());
console.log(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)), new Set(ids).size);`,
  "console.assert-based unit tests": `
function add(a, b) { return a + b; }
function isPalindrome(s) { const t = s.toLowerCase().replace(/[^a-z0-9]/g, ""); return t === [...t].reverse().join(""); }
console.assert(add(2, 2) === 4, "add works");
console.assert(isPalindrome("A man, a plan, a canal: Panama"));
console.assert(add(0.1, 0.2) === 0.3, "floating point: %s", add(0.1, 0.2));
console.assert(false, { expected: 1, got: 2 });
console.log("tests done");`,
  "console counters, groups and tables": `
console.group("Suite");
console.count("case"); console.count("case");
console.group();
console.log("nested\\nlines");
console.groupEnd();
console.countReset("case"); console.count("case");
console.groupEnd();
console.table([{ name: "a", n: 1 }, { name: "b", n: 22, extra: true }]);
console.table({ x: { v: 1 }, y: { v: 2 } }, ["v"]);
console.table(["p", "q"]);`,
  "numbers for people": `
const prices = [1234.5, 99.99, 1e6];
for (const p of prices) console.log(p.toLocaleString("en-US", { style: "currency", currency: "USD" }), p.toLocaleString("de-DE"), new Intl.NumberFormat("en", { notation: "compact" }).format(p));
const pr = new Intl.PluralRules("en-US", { type: "ordinal" });
const suffix = { one: "st", two: "nd", few: "rd", other: "th" };
console.log([1, 2, 3, 4, 11, 22, 103].map((n) => n + suffix[pr.select(n)]).join(" "));
console.log(["zebra", "Äpfel", "apple", "Zoo"].sort(new Intl.Collator("de").compare).join(","));`,
  "events and abort": `
const target = new EventTarget();
target.addEventListener("job", (e) => console.log("got", e.type, e.detail.id));
target.dispatchEvent(new CustomEvent("job", { detail: { id: 7 } }));
const ctl = new AbortController();
ctl.signal.addEventListener("abort", () => console.log("aborted:", ctl.signal.reason.name));
ctl.abort();
const t = AbortSignal.timeout(10);
// Node unrefs the timeout's timer: something else must keep it waiting (the box waits while awaited).
const keep = setTimeout(() => {}, 1000);
await new Promise((r) => t.addEventListener("abort", r));
clearTimeout(keep);
console.log(t.reason.name, structuredClone({ a: new Map([[1, 2]]) }).a.get(1));`,
};

describe("typical agent programs print what node prints", () => {
  const run = boxRunner();
  for (const [name, code] of Object.entries(PROGRAMS)) {
    it(name, async () => {
      const box = await run(code);
      assert.equal(box.ok, true, JSON.stringify(!box.ok && box.error));
      const node = await runNode(["--input-type=module", "-e", code], { env: { ...process.env, TZ: "UTC" } });
      assert.equal(node.code, 0, node.stderr);
      assert.equal(box.stdout, node.stdout);
      // Node prints assertion failures on stderr, as the box does.
      if (name.startsWith("console.assert")) assert.equal(box.stderr, node.stderr);
    });
  }
});
