// Generated HTTP answers for the fuzz tests of the gate and the proxy: a status line (any three
// digits and worse), a few headers from a pool that Node's parser and the gate treat specially,
// garbage bytes, a body that may be chunked, short, long, trickled, and an ending that may be a
// reset or a hang. Deterministic: answer `index` of `seed` is the same bytes on every run, so a
// failure names the case that reproduces it (`fuzzAnswer(seed, index)`).
import type { RawAnswer } from "./raw-http.ts";

/** mulberry32: a small, fast, seedable generator (not for anything but tests). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GARBAGE = "abcXYZ019 :;,\t-_/\\\"'=\x00\x01\x7f\x80\xe9\xff";

export function fuzzAnswer(seed: number, index: number): RawAnswer {
  const r = rng(Math.imul(seed, 0x9e3779b1) ^ index);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const garbage = (n: number) => {
    let s = "";
    const len = Math.floor(r() * n);
    for (let i = 0; i < len; i++) s += r() < 0.01 ? pick(["\r", "\n"]) : pick([...GARBAGE]);
    return s;
  };
  // Most answers are well-formed HTTP with odd values (they reach the gate's own checks and the
  // body paths); the rest are malformed anywhere (they reach Node's parser and its errors).
  const clean = r() < 0.75;
  const eol = clean || r() < 0.5 ? "\r\n" : pick(["\n", "\r", "\n\r"]);
  const version = clean
    ? pick(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0"])
    : pick(["HTTP/2", "HTTP/1.9", "HTTX/1.1", "http/1.1", "", "HTTP/1.1"]);
  const code = clean
    ? String(
        pick([200, 200, 204, 206, 301, 302, 303, 304, 307, 308, 404, 500, 101, 100, 199, Math.floor(r() * 1000)]),
      ).padStart(3, "0")
    : pick(["99", "1000", "-01", "2x0", "", " 200", "0200", "20", String(Math.floor(r() * 1000))]);
  const reason = pick(["OK", "", "Odd Reason", clean ? "x".repeat(Math.floor(r() * 300)) : garbage(40)]);
  const bodyLength = Math.floor(r() ** 3 * 40_000);
  const headers: string[] = [];
  const count = Math.floor(r() * 7);
  const pool = [
    () => `content-length: ${pick([0, bodyLength, bodyLength, bodyLength + 10, Math.max(0, bodyLength - 10)])}`,
    () => "transfer-encoding: chunked",
    () => pick(["transfer-encoding: gzip", "content-encoding: gzip"]),
    () => pick(["upgrade: websocket", "connection: upgrade", "connection: close", "connection: keep-alive"]),
    () => `location: ${pick([`/f/${index + 1}`, `/f/${index}`, "http://[::1", "//other.example/", "/f/x"])}`,
    () => `set-cookie: a=${"b".repeat(Math.floor(r() * 100))}`,
    () => `content-type: ${pick(["text/plain", "application/json", "text/html; charset=\u00e9"])}`,
    () => `x-many: ${"v,".repeat(Math.floor(r() * 2000))}`,
  ];
  const dirty = [
    () => `content-length: ${pick([-1, "abc", "1e3", 99_999_999_999, `${bodyLength}, ${bodyLength + 1}`])}`,
    () => `x-${garbage(10)}: ${garbage(60)}`,
    () => garbage(30),
    () => ` folded ${garbage(10)}`,
  ];
  for (let i = 0; i < count; i++) headers.push((clean || r() < 0.5 ? pick(pool) : pick(dirty))());
  const chunked = headers.includes("transfer-encoding: chunked") && r() < 0.7;
  const fill = pick(["x", "\u00ff", "{", "\x00"]);
  let body = fill.repeat(bodyLength);
  if (chunked) {
    const parts: string[] = [];
    for (let o = 0; o < body.length; o += 4096) {
      const part = body.slice(o, o + 4096);
      parts.push(`${part.length.toString(16)}\r\n${part}\r\n`);
    }
    body = parts.join("") + (r() < 0.9 ? "0\r\n\r\n" : "");
  }
  const head = [`${version} ${code} ${reason}`.trimEnd(), ...headers].join(eol) + eol + eol;
  const bytes = Buffer.from(head + body, "latin1");
  // Written whole, or cut at random points with short pauses (a trickled head or body).
  const steps: Array<Uint8Array | number> = [];
  if (r() < 0.6) steps.push(bytes);
  else {
    let at = 0;
    while (at < bytes.byteLength) {
      const step = 1 + Math.floor(r() * Math.min(bytes.byteLength, 8192));
      steps.push(bytes.subarray(at, at + step));
      at += step;
      if (r() < 0.3) steps.push(Math.floor(r() * 4));
    }
  }
  const ending = r();
  return { steps, then: ending < 0.02 ? "hang" : ending < 0.2 ? "destroy" : "end" };
}

/** The answer for a path `/f/<index>` (anything else: a plain 404). */
export function fuzzAnswerFor(seed: number): (path: string) => RawAnswer {
  return (path) => {
    const m = /^\/f\/(\d+)$/.exec(path);
    if (m) return fuzzAnswer(seed, Number(m[1]));
    return { steps: ["HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"], then: "end" };
  };
}
