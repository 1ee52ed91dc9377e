import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { documents } from "../helpers/docs.ts";
import { DEFAULT_MCP_HTTP } from "../../src/adapters/mcp/defaults.ts";
import { DEFAULT_CODE_MODE, DEFAULT_FORMAT } from "../../src/adapters/tools/defaults.ts";
import {
  DEFAULT_JAVASCRIPT,
  DEFAULT_LIMITS,
  DEFAULT_NETWORK,
  DEFAULT_PYTHON,
  DEFAULT_SEAL,
  DEFAULT_SESSIONS,
  resolveOptions,
  resolveRequest,
} from "../../src/options/index.ts";

describe("options", () => {
  it("fills every default from one place", () => {
    const o = resolveOptions(undefined);
    assert.deepEqual(o.limits, DEFAULT_LIMITS);
    assert.equal(o.python.engine, "pyodide");
    assert.equal(o.python.prewarm, false, "no python option: the pool starts on first use");
    assert.equal(resolveOptions({ python: {} }).python.prewarm, true);
    assert.equal(o.seal.seccomp, "enforce");
  });

  it("names the bad field", () => {
    const cases: Array<[unknown, string]> = [
      [{ limits: { timeoutMs: -1 } }, "limits.timeoutMs"],
      [{ limits: { bogus: 1 } }, "limits.bogus"],
      [{ python: { pool: 0 } }, "python.pool"],
      [{ seal: { seccomp: "loose" } }, "seal.seccomp"],
      [{ javascript: { hostFunctions: { "bad name": () => 1 } } }, "javascript.hostFunctions.bad name"],
      [{ nope: true }, "nope"],
    ];
    for (const [input, field] of cases) {
      assert.throws(
        () => resolveOptions(input as never),
        (e: unknown) => e instanceof InvalidOptionError && e.field === field,
        field,
      );
    }
  });

  it("validates requests and picks the engine", () => {
    const o = resolveOptions({});
    assert.equal(resolveRequest({ language: "typescript", code: "1" }, o).engine, "quickjs");
    assert.equal(resolveRequest({ language: "python", code: "1" }, o).engine, "pyodide");
    assert.throws(() => resolveRequest({ language: "python", code: "1", engine: "quickjs" }, o), /request\.engine/);
    assert.throws(() => resolveRequest({ language: "ruby" as never, code: "1" }, o), /request\.language/);
    assert.throws(() => resolveRequest({ language: "python", code: 1 as never }, o), /request\.code/);
    assert.throws(
      () => resolveRequest({ language: "python", code: "x".repeat(20), limits: { maxCodeBytes: 10 } }, o),
      /request\.code: is 20 bytes/,
    );
  });

  it("refuses file paths that leave the working directory", () => {
    const o = resolveOptions({});
    for (const bad of ["/etc/passwd", "../x", "a/../../x", "", "a\0b", "C:/x"]) {
      assert.throws(
        () => resolveRequest({ language: "python", code: "", files: { [bad]: "x" } }, o),
        InvalidOptionError,
        bad,
      );
    }
    const ok = resolveRequest({ language: "python", code: "", files: { "./data/in.csv": "a,b" } }, o);
    assert.deepEqual([...ok.files.keys()], ["data/in.csv"]);
  });
});

describe("the options tables in README.md and docs/", () => {
  const readme = documents()
    .map((d) => d.text)
    .join("\n");

  /** The `| \`name\` | default |` rows of the table right after `<!-- options:NAME -->`. */
  function table(name: string): Record<string, unknown> {
    const start = readme.indexOf(`<!-- options:${name} -->`);
    assert.ok(start >= 0, `no document has a <!-- options:${name} --> table`);
    const rows: Record<string, unknown> = {};
    const body = readme.slice(start).split("\n").slice(1);
    for (const line of body.slice(body.findIndex((l) => l.startsWith("|")))) {
      if (!line.startsWith("|")) break;
      const m = /^\| `([\w.]+)` \| (.+?) \|/.exec(line);
      if (!m) continue; // the header and separator rows
      const cell = m[2]!.replace(/^`(.*)`$/, "$1");
      rows[m[1]!] = JSON.parse(cell);
    }
    return rows;
  }

  it("limits: every limit with the default src/options/index.ts really has", () => {
    assert.deepEqual(table("limits"), { ...DEFAULT_LIMITS });
  });

  it("python: every pool option with its real default (prewarm is explained in prose)", () => {
    assert.deepEqual(table("python"), { ...DEFAULT_PYTHON });
    assert.equal(resolveOptions({}).python.prewarm, false);
    assert.equal(resolveOptions({ python: {} }).python.prewarm, true);
  });

  it("javascript: the constant defaults (isolation and workers are explained in prose)", () => {
    assert.deepEqual(table("javascript"), { ...DEFAULT_JAVASCRIPT });
    assert.equal(resolveOptions({}).javascript.maxQueue, DEFAULT_JAVASCRIPT.maxQueue);
  });

  it("seal: every layer with its real default, and the defaults are values SealOptions accepts", () => {
    assert.deepEqual(table("seal"), JSON.parse(JSON.stringify(DEFAULT_SEAL)));
    assert.deepEqual(resolveOptions({ seal: { ...DEFAULT_SEAL } }).seal, resolveOptions({}).seal);
    assert.deepEqual(resolveOptions({ seal: { dropPrivileges: true } }).seal, resolveOptions({}).seal);
  });

  it("sessions: the constant defaults (key and store are explained in prose)", () => {
    assert.deepEqual(table("sessions"), { ...DEFAULT_SESSIONS });
    const resolved = resolveOptions({}).sessions;
    assert.equal(resolved.keyGiven, false);
    assert.equal(resolved.key.length, 32);
    assert.deepEqual(resolveOptions({ sessions: { ...DEFAULT_SESSIONS } }).sessions, resolved);
    // A short key, or a store that is not one, names the field.
    assert.throws(() => resolveOptions({ sessions: { key: "short" } }), /sessions\.key/);
    assert.throws(() => resolveOptions({ sessions: { key: new Uint8Array(8) } }), /sessions\.key/);
    assert.throws(() => resolveOptions({ sessions: { store: {} as never } }), /sessions\.store/);
    assert.throws(() => resolveOptions({ sessions: { idleMs: 0 } }), /sessions\.idleMs/);
  });

  it("network: every cap with its real default", () => {
    assert.deepEqual(table("network"), { ...DEFAULT_NETWORK });
  });

  it("tool adapters: output caps and code mode caps", () => {
    const expected = {
      ...Object.fromEntries(Object.entries(DEFAULT_FORMAT).map(([k, v]) => [`output.${k}`, v])),
      ...DEFAULT_CODE_MODE,
    };
    assert.deepEqual(table("tools"), expected);
  });

  it("mcp http: every serveHttp setting with its real default", () => {
    assert.deepEqual(table("mcp-http"), { ...DEFAULT_MCP_HTTP });
  });
});
