// examples/cloudflare-worker through wrangler's own bundler and `wrangler dev` (workerd), at every
// compatibility setting a user has: the example's pinned-era date 2025-09-01 and wrangler's default
// date (after 2026-08-04, when nodejs_compat turns on by default), each with no flag, with
// nodejs_compat and with no_nodejs_compat. Before the stripper was built without TypeScript's Node
// detection, TypeScript rejected (`__filename is not defined`, `_os.platform is not a function`) under
// nodejs_compat and the Worker did not start under no_nodejs_compat. Every run here must be a result.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureBuilt } from "./build.ts";
import { workerProject, wranglerDev, type Compat } from "./wrangler.ts";

const MATRIX: { label: string; compat: Compat }[] = [];
for (const [dateLabel, date] of [
  ["2025-09-01", "2025-09-01"],
  ["wrangler's default date", undefined],
] as const) {
  for (const flag of [undefined, "nodejs_compat", "no_nodejs_compat"]) {
    MATRIX.push({
      label: `${dateLabel}, ${flag ?? "no flag"}`,
      compat: { ...(date ? { date } : {}), ...(flag ? { flags: [flag] } : {}) },
    });
  }
}

describe("Cloudflare Worker example under wrangler dev, every compatibility setting", () => {
  let project: ReturnType<typeof workerProject>;
  before(() => {
    ensureBuilt();
    project = workerProject();
  });
  after(() => project.remove());

  for (const { label, compat } of MATRIX) {
    it(`${label}: JavaScript, TypeScript, a timeout and a memory limit are results`, async () => {
      const dev = await wranglerDev(project.dir, compat);
      try {
        if (!compat.date) {
          // The row means something only while wrangler's default is past the nodejs_compat switch.
          const used = /default compatibility date: (\d{4}-\d\d-\d\d)/.exec(dev.log())?.[1];
          assert.ok(used && used >= "2026-08-04", `wrangler's default date: ${used}`);
        }
        const call = async (language: string, code: string): Promise<string> => {
          const body = JSON.stringify({ language, code });
          const res = await fetch(dev.url, { method: "POST", body, signal: AbortSignal.timeout(30_000) });
          const text = await res.text();
          assert.equal(
            res.status,
            200,
            `${language} \`${code}\` answered ${res.status}: ${text.slice(0, 400)}\n${dev.log().slice(-2000)}`,
          );
          return text;
        };
        assert.match(await call("javascript", "[1, 2, 3].map((x) => x * 2)"), /value: \[2, 4, 6\]/);
        assert.match(await call("typescript", "const n: number = 41;\nn + 1"), /value: 42/);
        assert.match(await call("javascript", "while (true) {}"), /^error: timeout/m);
        assert.match(await call("typescript", 'let s: string = "x"; for (;;) s = s + s'), /^error: memory/m);
        assert.match(await call("typescript", "type T = { a: number };\nconst t: T = { a: 1 };\nt.a"), /value: 1/);
      } finally {
        await dev.stop();
      }
    });
  }
});
