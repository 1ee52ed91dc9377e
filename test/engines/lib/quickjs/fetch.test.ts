import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../src/index.ts";
import type { SandboxEvent } from "../../../../src/core/events.ts";
import { startHttpServer, type TestServer } from "../../../helpers/http.ts";

let server: TestServer;
let other: TestServer;
let sandbox: Sandbox;
const events: SandboxEvent[] = [];
before(async () => {
  server = await startHttpServer();
  other = await startHttpServer();
  sandbox = await createSandbox({
    network: { allow: [{ host: `127.0.0.1:${server.port}`, headers: { "x-api-key": "secret" } }] },
    onEvent: (e) => events.push(e),
  });
});
after(async () => {
  await sandbox.close();
  await server.close();
  await other.close();
});
const js = async (code: string, extra: object = {}) => {
  const r = await sandbox.run({ language: "javascript", code, ...extra });
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
};

describe("quickjs fetch", () => {
  it("Response.error, redirect and json as Fetch defines them", async () => {
    const v = await js(`(async () => {
      const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
      const err = Response.error(), red = Response.redirect("http://h.example/a", 307), j = Response.json({ a: 1 }, { headers: { "x-k": "v" } });
      return [
        [err.type, err.status, err.body, name(() => err.headers.append("a", "b"))],
        [red.status, red.headers.get("location"), name(() => red.headers.set("a", "b")), name(() => Response.redirect("http://h/", 200)), name(() => Response.redirect("http://:bad url"))],
        [j.headers.get("content-type"), j.headers.get("x-k"), await j.json(), name(() => Response.json(Symbol())), name(() => Response.json(1, { status: 204 }))],
        [Response.error.name, Response.error.length, Response.redirect.length, Response.json.length],
      ];
    })()`);
    assert.deepEqual(v, [
      ["error", 0, null, "TypeError"],
      [307, "http://h.example/a", "TypeError", "RangeError", "TypeError"],
      ["application/json", "v", { a: 1 }, "TypeError", "TypeError"],
      ["error", 0, 1, 1],
    ]);
  });

  it("a program cannot attach a Response to one of the run's host streams through its init", async () => {
    const v = await js(`(async () => {
      const r = new Response(null, { _stream: 1 });
      return [r.body, await r.text(), Object.keys(r)];
    })()`);
    assert.deepEqual(v, [null, "", []]);
  });

  it("a null body is never used; formData() reads an urlencoded body and refuses others", async () => {
    const v = await js(`(async () => {
      const empty = new Response(null); await empty.text();
      const fd = await new Response("a=1&b=%20x", { headers: { "content-type": "application/x-www-form-urlencoded" } }).formData();
      let refused; try { await new Response("x").formData(); } catch (e) { refused = e.name; }
      return [empty.bodyUsed, [...fd], refused];
    })()`);
    assert.deepEqual(v, [
      false,
      [
        ["a", "1"],
        ["b", " x"],
      ],
      "TypeError",
    ]);
  });

  it("Request and Response attributes are read-only accessors; a relative URL needs globalThis.location", async () => {
    const v = await js(`(() => {
      const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
      const noBase = name(() => new Request("x"));
      globalThis.location = { href: "http://h.example/dir/page" };
      const q = new Request("x?y", { method: "post" }), r = new Response("b", { status: 201 });
      const d = Object.getOwnPropertyDescriptor(Request.prototype, "url");
      return [noBase, q.url, q.method, name(() => { "use strict"; q.url = "z"; }), q.mode, q.credentials, q.cache, r.status, r.ok, Object.keys(q), typeof d.get, d.enumerable];
    })()`);
    assert.deepEqual(v, [
      "TypeError",
      "http://h.example/dir/x?y",
      "POST",
      "TypeError",
      "cors",
      "same-origin",
      "default",
      201,
      true,
      [],
      "function",
      true,
    ]);
  });

  // The same program in the box and in this Node process (undici's Request, Response, FormData).
  const likeNode = async (code: string) => {
    const node: unknown = JSON.parse(JSON.stringify(await (0, eval)(code)));
    assert.deepEqual(await js(code), node);
  };

  it("RequestInit's enumerations are validated and kept, and a Request's signal is always an AbortSignal, as Node's", async () => {
    await likeNode(`(() => {
      const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
      const r = new Request("http://h.example/", { mode: "no-cors", credentials: "include", cache: "no-store", referrerPolicy: "origin", integrity: "sha256-x", keepalive: 1 });
      const c = new AbortController(), q = new Request("http://h.example/", { signal: c.signal }), before = q.signal.aborted;
      c.abort();
      const bad = [["mode", "bogus"], ["mode", "navigate"], ["credentials", "x"], ["cache", "x"], ["cache", "only-if-cached"], ["referrerPolicy", "x"], ["redirect", "x"]];
      return [
        [r.mode, r.credentials, r.cache, r.referrerPolicy, r.integrity, r.keepalive, new Request(r).mode, new Request(r).cache],
        bad.map(([k, v]) => name(() => new Request("http://h.example/", { [k]: v }))),
        [new Request("http://h.example/").signal instanceof AbortSignal, new Request("http://h.example/", { signal: null }).signal instanceof AbortSignal],
        [q.signal instanceof AbortSignal, q.signal === c.signal, before, q.signal.aborted, new Request(q).signal.aborted, name(() => new Request("http://h.example/", { signal: {} }))],
      ];
    })()`);
  });

  it("attributes and operations called on a foreign object throw (WebIDL brand checks), as Node's", async () => {
    await likeNode(`(async () => {
      const name = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
      const rejects = async (f) => { try { await f(); return "no error"; } catch (e) { return e.name; } };
      const get = (C, k) => Object.getOwnPropertyDescriptor(C.prototype, k).get;
      const fakeRequest = Object.create(Request.prototype), fakeResponse = Object.create(Response.prototype);
      return [
        [name(() => get(Request, "url").call({})), name(() => fakeRequest.url), name(() => fakeRequest.signal), name(() => get(Response, "status").call(new Request("http://h.example/")))],
        [name(() => fakeResponse.ok), name(() => fakeResponse.body), name(() => fakeResponse.bodyUsed), name(() => fakeResponse.clone()), name(() => fakeRequest.clone())],
        [name(() => Headers.prototype.get.call({}, "a")), name(() => Headers.prototype.append.call({ _list: [] }, "a", "b")), name(() => Headers.prototype.forEach.call({}, () => {}))],
        [await rejects(() => Response.prototype.text.call({})), await rejects(() => Request.prototype.formData.call(fakeRequest)), await rejects(() => Response.prototype.arrayBuffer.call(fakeResponse)), await rejects(() => Response.prototype.blob.call({}))],
      ];
    })()`);
  });

  it("formData() parses a multipart/form-data body, fields and files, as Node's", async () => {
    await likeNode(`(async () => {
      const fd = new FormData();
      fd.append("a", "1"); fd.append("é name", "x\\r\\ny"); fd.append("f", new Blob(["hello"], { type: "text/x-a" }), "h.txt");
      fd.append("g", new Blob([new Uint8Array([0, 255, 13, 10])])); fd.append("a", "2");
      const show = async (form) => { const out = []; for (const [k, v] of form) out.push([k, typeof v === "string" ? v : [v instanceof File, v.name, v.type, v.size, Array.from(new Uint8Array(await v.arrayBuffer()))]]); return out; };
      const raw = '--XyZ\\r\\nContent-Disposition: form-data; name="t"\\r\\n\\r\\nplain\\r\\n--XyZ\\r\\nContent-Disposition: form-data; name="u"; filename="u.bin"\\r\\n\\r\\nraw\\r\\n--XyZ--\\r\\n';
      const parse = async (body, type) => { try { return await show(await new Response(body, { headers: { "content-type": type } }).formData()); } catch (e) { return e.name; } };
      return [
        await show(await new Response(fd).formData()),
        await parse(raw, 'multipart/form-data; boundary="XyZ"'),
        await parse("junk", "multipart/form-data; boundary=q"),
        await parse("--q\\r\\n\\r\\nx\\r\\n--q--", "multipart/form-data; boundary=q"),
        await parse("", "multipart/form-data"),
        await parse("--q--\\r\\n", "multipart/form-data; boundary=q"),
      ];
    })()`);
  });

  it("Headers, Request and Response have their interface's class string, and structuredClone refuses them", async () => {
    const v = await js(`[new Headers(), new Request("${server.origin}/"), new Response()].map((o) => {
      let cloned; try { structuredClone(o); cloned = "cloned"; } catch (e) { cloned = e.name; }
      return [String(o), cloned];
    })`);
    assert.deepEqual(v, [
      ["[object Headers]", "DataCloneError"],
      ["[object Request]", "DataCloneError"],
      ["[object Response]", "DataCloneError"],
    ]);
  });

  it("fetches through the host: Request, Response, Headers, JSON and bytes bodies, streaming reads", async () => {
    const v = (await js(`
      const r = await fetch(new Request("${server.origin}/echo", { method: "POST", headers: new Headers([["x-a", "1"]]), body: new Uint8Array([104, 105]) }));
      const seen = await r.json();
      const res = await fetch("${server.origin}/bytes?n=200000");
      const reader = res.body.getReader();
      let n = 0, chunks = 0;
      for (;;) { const { done, value } = await reader.read(); if (done) break; n += value.length; chunks++; }
      const form = new FormData(); form.append("k", "v");
      const posted = await (await fetch("${server.origin}/echo", { method: "POST", body: form })).json();
      ({ status: r.status, ok: r.ok, reply: r.headers.get("x-reply"), body: seen.body, method: seen.method, a: seen.headers["x-a"],
         key: seen.headers["x-api-key"], n, many: chunks > 1, form: posted.body.includes('name="k"'),
         type: posted.headers["content-type"].startsWith("multipart/form-data; boundary="),
         json: await Response.json({ x: 1 }).json(), text: await new Response("hé").text() })`)) as Record<
      string,
      unknown
    >;
    assert.deepEqual(v, {
      status: 200,
      ok: true,
      reply: "yes",
      body: "hi",
      method: "POST",
      a: "1",
      key: "secret",
      n: 200000,
      many: true,
      form: true,
      type: true,
      json: { x: 1 },
      text: "hé",
    });
  });

  it("a refusal is a TypeError naming the host and why; the other listener sees nothing", async () => {
    const v = await js(`
      const out = [];
      for (const url of ["${other.origin}/hello", "${server.origin}/redirect?to=${encodeURIComponent(`${other.origin}/hello`)}", "http://169.254.169.254/latest/meta-data/"]) {
        try { await fetch(url); out.push("reached"); } catch (e) { out.push(e.name + ": " + e.message); }
      }
      out`);
    assert.deepEqual(v, [
      `TypeError: network: 127.0.0.1:${other.port} refused: not in the allowlist`,
      `TypeError: network: 127.0.0.1:${other.port} refused: redirect from 127.0.0.1:${server.port} to a host that is not in the allowlist`,
      "TypeError: network: 169.254.169.254:80 refused: not in the allowlist",
    ]);
    assert.equal(other.requests.length, 0);
    assert.ok(events.some((e) => e.type === "egress" && !e.allowed && e.reason === "redirect"));
  });

  it("AbortSignal-like signals cancel a request", async () => {
    const v = await js(`
      const listeners = [];
      const signal = { aborted: false, addEventListener: (t, f) => listeners.push(f) };
      const p = fetch("${server.origin}/slow", { signal }).then((r) => r.text());
      setTimeout(() => { signal.aborted = true; listeners.forEach((f) => f()); }, 50);
      try { await p; "finished" } catch (e) { e.name }`);
    assert.equal(v, "AbortError");
  });

  it("is absent without network, and a run may turn it off", async () => {
    await using bare = await createSandbox();
    const r = await bare.run({
      language: "javascript",
      code: "[typeof fetch, typeof Request, typeof Response, typeof Headers]",
    });
    assert.deepEqual(r.ok && r.value, ["undefined", "undefined", "undefined", "undefined"]);
    assert.equal(await js("typeof fetch", { network: false }), "undefined");
    assert.equal(await js('typeof fetch + " " + typeof globalThis.__wasmcell_net_open'), "function undefined");
  });

  it("the run's deadline holds over a slow response", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: `await (await fetch("${server.origin}/slow")).text()`,
      limits: { timeoutMs: 300 },
    });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.kind, "timeout");
  });
});
