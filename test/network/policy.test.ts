import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { DEFAULT_NETWORK, resolveOptions, resolveRequest } from "../../src/options/index.ts";

const field = (name: string) => (e: unknown) => e instanceof InvalidOptionError && e.field === name;

describe("network options", () => {
  it("is off unless given, with documented defaults when on", () => {
    assert.equal(resolveOptions({}).network, undefined);
    assert.equal(resolveOptions({ network: false }).network, undefined);
    const on = resolveOptions({ network: { allow: ["a.test"] } }).network!;
    assert.equal(on.maxRequests, DEFAULT_NETWORK.maxRequests);
    assert.equal(on.methods, undefined);
    assert.equal(resolveRequest({ language: "javascript", code: "" }, resolveOptions({})).network, undefined);
  });

  it("names the bad entry or field", () => {
    assert.throws(
      () => resolveOptions({ network: { allow: ["ok.test", "https://x.test"] } }),
      field("network.allow[1]"),
    );
    assert.throws(() => resolveOptions({ network: { allow: [], maxRequests: -1 } }), field("network.maxRequests"));
    assert.throws(() => resolveOptions({ network: {} as never }), field("network.allow"));
    assert.throws(() => resolveOptions({ network: { allow: [], bogus: 1 } as never }), field("network.bogus"));
    assert.throws(() => resolveOptions({ onEvent: 1 as never }), field("onEvent"));
  });

  it("lets a run narrow the sandbox's network, never widen it", () => {
    const o = resolveOptions({
      network: {
        allow: [{ host: "api.test", headers: { "x-key": "k" } }, "*.w.test"],
        maxRequests: 10,
        methods: ["GET", "POST"],
      },
    });
    const run = (network: unknown) =>
      resolveRequest({ language: "javascript", code: "", network: network as never }, o).network;
    const narrowed = run({ allow: ["api.test", "en.w.test"], maxRequests: 3, methods: ["get"] })!;
    assert.deepEqual(
      narrowed.rules.map((r) => r.source),
      ["api.test", "en.w.test"],
    );
    assert.deepEqual(narrowed.rules[0]!.headers, [["x-key", "k"]], "the sandbox's injected headers stay");
    assert.equal(narrowed.maxRequests, 3);
    assert.deepEqual(narrowed.methods, ["GET"]);
    assert.equal(run(false), undefined);
    assert.equal(run(undefined), o.network);
    assert.throws(() => run({ allow: ["other.test"] }), field("request.network.allow[0]"));
    assert.throws(() => run({ allow: ["w.test"] }), field("request.network.allow[0]"));
    assert.throws(() => run({ maxRequests: 11 }), field("request.network.maxRequests"));
    assert.throws(() => run({ methods: ["DELETE"] }), field("request.network.methods"));
    assert.throws(() => run({ resolve: () => [] }), field("request.network.resolve"));
    assert.throws(
      () => resolveRequest({ language: "javascript", code: "", network: { allow: ["a.test"] } }, resolveOptions({})),
      field("request.network"),
    );
  });
});

describe("result events", () => {
  it("reports the limit that ended a run, from the host's verdict", async () => {
    const { createSandbox } = await import("../../src/index.ts");
    const events: Array<Record<string, unknown>> = [];
    await using sandbox = await createSandbox({ onEvent: (e) => events.push({ ...e, time: 0 }) });
    await sandbox.run({ language: "javascript", code: "for (;;) {}", limits: { timeoutMs: 100 } });
    await sandbox.run({ language: "javascript", code: "console.log('x'.repeat(100))", limits: { maxOutputBytes: 10 } });
    assert.deepEqual(events, [
      { type: "limit", engine: "quickjs", limit: "timeoutMs", value: 100, time: 0 },
      { type: "limit", engine: "quickjs", limit: "maxOutputBytes", value: 10, time: 0 },
    ]);
  });
});

describe("the tool description", () => {
  it("says there is no network, or names the hosts", async () => {
    const { createSandbox } = await import("../../src/index.ts");
    const { defineRunCodeTool } = await import("../../src/adapters/tools/index.ts");
    await using bare = await createSandbox();
    const none = defineRunCodeTool({ sandbox: bare }).description;
    assert.match(none, /There is no network/);
    assert.match(none, /no fetch\./);
    await using net = await createSandbox({
      network: { allow: ["api.github.com", "*.wikipedia.org"], maxRequests: 5 },
    });
    const some = defineRunCodeTool({ sandbox: net }).description;
    assert.match(some, /may reach only api\.github\.com, \*\.wikipedia\.org/);
    assert.match(some, /At most 5 requests per call\. JavaScript: fetch\(\)\. Python: urllib\.request/);
    assert.doesNotMatch(some, /no fetch|There is no network/);
  });
});
