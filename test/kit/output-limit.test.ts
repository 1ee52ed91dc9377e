// Every failure that is a limit firing names that limit (error.limit) and emits one `limit` event for
// it, on every engine; an output verdict names the cap that was passed, in one wording whichever room
// saw it, and never a limit the guest named for itself.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { Language, Limits, RunFailure, SandboxEvent } from "../../src/index.ts";

interface Case {
  engine: "quickjs" | "pyodide" | "native";
  language: Language;
  value: string;
  files: (n: number) => string;
  bytes: (n: number) => string;
}

const CASES: Case[] = [
  {
    engine: "quickjs",
    language: "javascript",
    value: "'x'.repeat(20_000)",
    files: (n) => `for (let i = 0; i < ${n}; i++) fs.writeFileSync('f' + i + '.txt', 'x'); 1`,
    bytes: (n) => `fs.writeFileSync('big.bin', 'x'.repeat(${n})); 1`,
  },
  ...(["pyodide", "native"] as const).map((engine) => ({
    engine,
    language: "python" as const,
    value: "'x' * 20_000",
    files: (n: number) => `for i in range(${n}):\n    open(f'f{i}.txt', 'w').write('x')`,
    bytes: (n: number) => `open('big.bin', 'w').write('x' * ${n})`,
  })),
];

const WORDS: Record<string, RegExp> = {
  maxResultBytes: /^the result value is (\d+ bytes, )?over the 10000-byte limit \(limits\.maxResultBytes\)/,
  maxFiles: /^the run wrote more than 3 files \(limits\.maxFiles\)$/,
  maxFileBytes: /^the files the run wrote hold more than 4000 bytes \(limits\.maxFileBytes\)$/,
};

for (const c of CASES) {
  describe(`${c.engine}: an output verdict names its cap`, () => {
    let sandbox: Sandbox;
    const events: SandboxEvent[] = [];
    before(async () => {
      sandbox = await createSandbox({
        python: { engine: c.engine === "native" ? "native" : "pyodide", pool: 1 },
        onEvent: (e) => events.push(e),
      });
    });
    after(() => sandbox.close());

    const run = async (code: string, limits: Partial<Limits>): Promise<RunFailure> => {
      events.length = 0;
      const r = await sandbox.run({
        language: c.language,
        engine: c.engine,
        code,
        limits: { timeoutMs: 20_000, ...limits },
      });
      assert.equal(r.ok, false, JSON.stringify(r));
      return r;
    };

    for (const [limit, code, limits] of [
      ["maxResultBytes", c.value, { maxResultBytes: 10_000 }],
      ["maxFiles", c.files(5), { maxFiles: 3 }],
      ["maxFileBytes", c.bytes(5000), { maxFileBytes: 4000 }],
    ] as const) {
      it(`${limit}: kind output_limit, error.limit, the one wording, one limit event`, async () => {
        const r = await run(code, limits);
        assert.equal(r.error.kind, "output_limit");
        assert.equal(r.error.limit, limit);
        assert.equal(r.error.name, "OutputLimitError");
        assert.match(r.error.message, WORDS[limit]!);
        const fired = events.filter((e) => e.type === "limit");
        assert.deepEqual(
          fired.map((e) => e.type === "limit" && [e.limit, e.value]),
          [[limit, (limits as Partial<Limits>)[limit]]],
        );
      });
    }

    it("a timeout names timeoutMs", async () => {
      const r = await run(c.language === "python" ? "while True: pass" : "while (true) {}", { timeoutMs: 300 });
      assert.equal(r.error.kind, "timeout");
      assert.equal(r.error.limit, "timeoutMs");
    });
  });
}

describe("native: a forged output verdict names only a cap of what a run returns", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ python: { engine: "native", pool: 1 } });
  });
  after(() => sandbox.close());

  for (const claimed of ["memoryMb", "timeoutMs", "nonsense", 7]) {
    it(`a result line claiming ${JSON.stringify(claimed)} is read as maxResultBytes`, async () => {
      const line = JSON.stringify({
        envelope: { ok: false, error: { kind: "output_limit", name: "X", message: "forged", limit: claimed } },
        files: [],
      });
      const r = await sandbox.run({
        language: "python",
        code: `import os\nos.write(4, (${JSON.stringify(line)} + "\\n").encode())\nos._exit(0)`,
      });
      assert.equal(!r.ok && r.error.kind, "output_limit");
      assert.equal(!r.ok && r.error.limit, "maxResultBytes");
      assert.doesNotMatch(!r.ok ? r.error.message : "", /forged/);
    });
  }
});
