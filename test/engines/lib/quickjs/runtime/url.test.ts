// URL and URLSearchParams against Node's for the same inputs, and WPT-style cases (urltestdata-like).
import { describe } from "node:test";
import { parity } from "./parity.ts";

describe("URL and URLSearchParams behave like Node's", () => {
  parity([
    [
      "parses and normalises",
      `(() => { const u = new URL("HTTPS://User:Pw@EXAMPLE.com:443/a/./b/../c?q=1#f"); return [u.href, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, u.origin]; })()`,
    ],
    [
      "relative against a base",
      `[new URL("../x?y#z", "http://h/a/b/c").href, new URL("//other/p", "https://h/").href, new URL("?q", "http://h/p").href]`,
    ],
    [
      "IDNA and percent-encoding",
      `[new URL("http://bücher.example/ä b").href, new URL("http://[::1]:8080/").host, new URL("http://0x7f.1/").hostname]`,
    ],
    [
      "file and data URLs",
      `[new URL("file:///tmp/a b").pathname, new URL("data:text/plain,hi").pathname, new URL("mailto:a@b").protocol]`,
    ],
    ["invalid URL is a TypeError", `new URL("not a url")`],
    ["invalid base is a TypeError", `new URL("/x", "nope")`],
    ["no argument is a TypeError", `new URL()`],
    [
      "canParse and parse",
      `[URL.canParse("http://x"), URL.canParse("x"), URL.canParse("x", "http://b/"), URL.parse("nope"), URL.parse("/p", "http://b").href]`,
    ],
    [
      "setters follow the spec",
      `(() => { const u = new URL("http://a/b?c#d"); u.pathname = "/x y"; u.search = "?k=v w"; u.hash = "h"; u.port = "8080"; u.hostname = "Example.ORG"; u.protocol = "https"; return u.href; })()`,
    ],
    [
      "setting a default port clears it",
      `(() => { const u = new URL("https://a:444/"); u.port = "443"; return [u.port, u.host]; })()`,
    ],
    ["href setter throws on invalid", `(() => { const u = new URL("http://a/"); u.href = "::"; })()`],
    [
      "searchParams is live both ways",
      `(() => { const u = new URL("http://a/?x=1&y=2"); u.searchParams.append("z", "3 4"); const a = u.href; u.search = "?w=9"; return [a, u.searchParams.get("w"), u.searchParams.get("x")]; })()`,
    ],
    [
      "empty params remove the ?",
      `(() => { const u = new URL("http://a/?x=1"); u.searchParams.delete("x"); return u.href; })()`,
    ],
    ["URLSearchParams from a string", `[...new URLSearchParams("?a=1&b=2&a=3&c&=d&e=%20f+g")]`],
    [
      "URLSearchParams from a record and pairs",
      `[String(new URLSearchParams({ a: "1 2", b: "é&=" })), String(new URLSearchParams([["x", "1"], ["x", "2"]]))]`,
    ],
    ["bad pair is a TypeError", `new URLSearchParams([["a"]])`],
    [
      "get, getAll, has, set, delete with value",
      `(() => { const p = new URLSearchParams("a=1&b=2&a=3&a=4"); const r = [p.get("a"), p.getAll("a"), p.has("a", "3"), p.has("a", "9"), p.get("zz")]; p.set("a", "x"); p.delete("b", "nope"); r.push(p.toString()); p.delete("b", "2"); r.push(p.toString(), p.size); return r; })()`,
    ],
    [
      "sort is stable by code unit",
      `(() => { const p = new URLSearchParams("z=1&a=2&z=0&A=3&é=4"); p.sort(); return p.toString(); })()`,
    ],
    [
      "serialiser escapes like application/x-www-form-urlencoded",
      `new URLSearchParams({ k: "!'()*~-._ ?/&=+%" }).toString()`,
    ],
    ["lone surrogates become U+FFFD", `new URLSearchParams({ k: "\\ud800" }).toString()`],
    [
      "forEach, keys, values, entries",
      `(() => { const p = new URLSearchParams("a=1&b=2"); const seen = []; p.forEach((v, k) => seen.push(k + v)); return [seen, [...p.keys()], [...p.values()], [...p.entries()]]; })()`,
    ],
    ["toJSON and String", `[JSON.stringify({ u: new URL("http://a/b") }), String(new URL("http://a"))]`],
  ]);
});
