// The house's layering is enforced by `npm run lint` (eslint/layers.js, eslint/edge-clean.js). Each
// invariant is linted here against a deliberate violation, so a rule that stops firing fails a test,
// and against the allowed form, so a rule that fires on everything fails too.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";
import wasmcell from "../../eslint/edge-clean.js";
import { layers, noCycles, oneDeadline } from "../../eslint/layers.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  // The layering rules alone (the circle rule has its own cases below: a bad import here may also close
  // a circle in the real tree).
  overrideConfig: [
    { files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } },
    ...layers.filter((block) => block !== noCycles),
  ],
});

/** The rule ids that fire on `code` placed at `path` (relative to the checkout). */
async function fired(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, path) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

const FLOOR_RULE = "import-x/no-restricted-paths";
const cases: Array<{ invariant: string; path: string; bad: string; good: string; rule?: string }> = [
  {
    invariant: "the ground imports no floor above it",
    path: "src/core/x.ts",
    bad: `import { Deadline } from "../kit/deadline.ts";`,
    good: `import { InvalidOptionError } from "./errors.ts";`,
  },
  {
    invariant: "rooms of one floor set apart know nothing of each other (stores and the network)",
    path: "src/stores/x.ts",
    bad: `import { openRunNetwork } from "../network/open.ts";`,
    good: `import { Deadline } from "../kit/deadline.ts";`,
  },
  {
    invariant: "engines never import adapters",
    path: "src/engines/lib/quickjs/x.ts",
    bad: `import { formatResult } from "../../../adapters/tools/format.ts";`,
    good: `import { InvalidOptionError } from "../../../core/errors.ts";`,
  },
  {
    invariant: "engines never import the front door",
    path: "src/engines/native/x.ts",
    bad: `import { createSandbox } from "../../sandbox.ts";`,
    good: `import { WarmPool } from "../../pool/pool.ts";`,
  },
  {
    invariant: "outside the jail, the jail is reached through jail/index.ts",
    rule: "no-restricted-imports",
    path: "src/engines/native/x.ts",
    bad: `import { isExecutable } from "../../jail/host.ts";`,
    good: `import { isExecutable } from "../../jail/index.ts";`,
  },
  {
    invariant: "the jail knows nothing of engines",
    path: "src/jail/x.ts",
    bad: `import { NATIVE_PYTHON } from "../engines/native/doctor.ts";`,
    good: `import { isExecutable } from "./host.ts";`,
  },
  {
    invariant: "the pool knows nothing of engines or the jail",
    path: "src/pool/x.ts",
    bad: `import { spawnJailed } from "../jail/index.ts";`,
    good: `import { QueueFullError } from "../core/errors.ts";`,
  },
  {
    invariant: "adapters reach engines only through the front door",
    path: "src/adapters/tools/x.ts",
    bad: `import { createEngine } from "../../engines/quickjs/index.ts";`,
    good: `import type { Sandbox } from "../../sandbox.ts";`,
  },
  {
    invariant: "the queue reaches engines only through the front door",
    path: "src/queue/x.ts",
    bad: `import { createEngine } from "../engines/quickjs/index.ts";`,
    good: `import type { Sandbox } from "../sandbox.ts";`,
  },
  {
    invariant: "the queue never imports the CLI",
    path: "src/queue/x.ts",
    bad: `import { main } from "../cli/main.ts";`,
    good: `import { createSandbox } from "../index.ts";`,
  },
  {
    invariant: "the root floor imports no higher floor",
    path: "src/options/index.ts",
    bad: `import { Sandbox } from "../sandbox.ts";`,
    good: `import { InvalidOptionError } from "../core/errors.ts";`,
  },
  {
    invariant: "the network floor knows no engine, no option and nothing above",
    path: "src/network/x.ts",
    bad: `import { resolveOptions } from "../options/index.ts";`,
    good: `import { NetworkDeniedError } from "../core/errors.ts";`,
  },
  {
    invariant: "the network floor reads the kit (the run's deadline), and nothing of the engines",
    path: "src/network/x.ts",
    bad: `import { createEngine } from "../engines/quickjs/index.ts";`,
    good: `import { GRACE } from "../kit/deadline.ts";`,
  },
  {
    invariant: "the kit sits below everything that runs code",
    path: "src/kit/x.ts",
    bad: `import { WarmPool } from "../pool/pool.ts";`,
    good: `import { InvalidOptionError } from "../core/errors.ts";`,
  },
  {
    invariant: "the package library and the cache sit below the engines",
    path: "src/library/library.ts",
    bad: `import { snapshotKey } from "../engines/pyodide/boot-image.ts";`,
    good: `import { isAlive } from "../jail/index.ts";`,
  },
  {
    invariant: "the setup command may use the engines, never the CLI",
    path: "src/setup/index.ts",
    bad: `import { HELP } from "../cli/usage.ts";`,
    good: `import { getSnapshot } from "../engines/pyodide/boot-image.ts";`,
  },
  {
    invariant: "session stores know nothing of the engines",
    path: "src/stores/x.ts",
    bad: `import { PyodideEngine } from "../engines/pyodide/index.ts";`,
    good: `import type { SessionStore } from "./store.ts";`,
  },
  {
    invariant: "a sidecar folder imports only node:*, its own files and types",
    rule: "no-restricted-imports",
    path: "src/engines/pyodide/sidecar/main.ts",
    bad: `import { snapshotKey } from "../boot-image.ts";`,
    good: `import { format } from "node:util";\nimport { channel } from "./channel.ts";\nimport type { RunMessage } from "../protocol.ts";`,
  },
];

describe("lint invariants: each fires on a violation and not on the allowed form", () => {
  for (const c of cases) {
    it(c.invariant, async () => {
      assert.deepEqual(await fired(c.path, c.bad), [c.rule ?? FLOOR_RULE], `violation at ${c.path}`);
      assert.deepEqual(await fired(c.path, c.good), [], `allowed form at ${c.path}`);
    });
  }
});

describe("lint invariant: the package root reaches nothing Node-only, however deep", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-lint-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const edge = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } },
      { files: ["index.ts"], plugins: { wasmcell }, rules: { "wasmcell/edge-clean": "error" } },
    ],
  });
  const lintEntry = async (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const [result] = await edge.lintText(files["index.ts"]!, { filePath: join(dir, "index.ts") });
    return result?.messages ?? [];
  };

  it("fires on a node: import two modules down, naming the chain", async () => {
    const messages = await lintEntry({
      "index.ts": `export { a } from "./a.ts";`,
      "a.ts": `import { b } from "./b.ts";\nexport const a = b;`,
      "b.ts": `import { readFileSync } from "node:fs";\nexport const b = readFileSync;`,
    });
    assert.equal(messages.length, 1);
    assert.match(messages[0]!.message, /a\.ts:1 → \.\/b\.ts, then .*b\.ts:1 → node:fs/);
  });

  it("fires on a bare builtin name too", async () => {
    const messages = await lintEntry({ "index.ts": `import "./a.ts";`, "a.ts": `import os from "os";\nvoid os;` });
    assert.equal(messages.length, 1);
  });

  it("follows neither type-only imports nor dynamic import()", async () => {
    const messages = await lintEntry({
      "index.ts": `import type { B } from "./b.ts";\nimport { type C } from "./c.ts";\nexport const load = () => import("./b.ts");\nexport type { B, C };`,
      "b.ts": `import { readFileSync } from "node:fs";\nexport type B = typeof readFileSync;`,
      "c.ts": `import { readFileSync } from "node:fs";\nexport type C = typeof readFileSync;`,
    });
    assert.deepEqual(messages, []);
  });
});

describe("lint invariant: a deadline is made in one place", () => {
  const lint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } }, oneDeadline],
  });
  const fire = async (path: string, code: string) => {
    const [result] = await lint.lintText(code, { filePath: join(root, path) });
    // Nested arithmetic matches at each level: which rules fired is what counts.
    return [...new Set((result?.messages ?? []).map((m) => m.ruleId))];
  };

  it("fires on timeoutMs added to a clock, in an engine or the network", async () => {
    for (const code of [
      "const at = performance.now() + req.limits.timeoutMs;",
      "const left = Date.now() + limits.timeoutMs - 150;",
      "if (now() - begun > job.req.limits.timeoutMs) stop();",
    ])
      assert.deepEqual(await fire("src/engines/lib/quickjs/x.ts", code), ["no-restricted-syntax"], code);
    assert.deepEqual(await fire("src/network/x.ts", "const d = performance.now() + p.timeoutMs;"), [
      "no-restricted-syntax",
    ]);
  });

  it("allows the Deadline, arithmetic without a clock, and the sidecar (which cannot import it)", async () => {
    assert.deepEqual(await fire("src/engines/lib/quickjs/x.ts", "const d = new Deadline(req.limits.timeoutMs);"), []);
    assert.deepEqual(await fire("src/queue/x.ts", "const need = limits.timeoutMs + LOCK_MARGIN_MS;"), []);
    assert.deepEqual(
      await fire("src/engines/pyodide/sidecar/x.ts", "deadline.at = performance.now() + limits.timeoutMs;"),
      [],
    );
    assert.deepEqual(
      await fire("src/kit/deadline.ts", "const at = performance.now() + timeoutMs;"),
      [],
      "the Deadline itself",
    );
  });
});

describe("lint invariant: no import circles", () => {
  // A planted circle in a scratch tree shaped like src/ (the rule's block matches src/**/*.ts).
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-cycle-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cycles = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } }, noCycles],
  });
  const lint = async (files: Record<string, string>, entry: string) => {
    mkdirSync(join(dir, "src"), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "src", name), text);
    const [result] = await cycles.lintText(files[entry]!, { filePath: join(dir, "src", entry) });
    return (result?.messages ?? []).map((m) => m.ruleId);
  };

  it("fires on a planted circle of value imports", async () => {
    const fired = await lint(
      {
        "a.ts": `import { b } from "./b.ts";\nexport const a = () => b;`,
        "b.ts": `import { a } from "./a.ts";\nexport const b = () => a;`,
      },
      "a.ts",
    );
    assert.deepEqual(fired, ["import-x/no-cycle"]);
  });

  it("does not fire on a chain without a circle", async () => {
    const fired = await lint(
      { "c.ts": `import { d } from "./d.ts";\nexport const c = () => d;`, "d.ts": `export const d = 1;` },
      "c.ts",
    );
    assert.deepEqual(fired, []);
  });
});
