// bullmq and ioredis are optional peers: no wasmcell entry loads them when imported, and the queue and
// the Redis session store, used without them, throw MissingDependencyError with the install command.
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runNode } from "../helpers/process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PEERS = ["bullmq", "ioredis"];

/** Every JavaScript entry the package exports, as the source file its dist file is built from. */
async function entries(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, string | Record<string, string>>;
  };
  const out = new Set<string>();
  for (const target of Object.values(pkg.exports)) {
    const file = typeof target === "string" ? target : (target.node ?? target.default);
    if (file?.startsWith("./dist/") && file.endsWith(".js")) {
      out.add(join(ROOT, "src", file.slice("./dist/".length).replace(/\.js$/, ".ts")));
    }
  }
  return [...out];
}

/**
 * A child that imports `files`, then runs `then`, and prints which optional peers are in the CommonJS
 * module cache (both are CommonJS packages: an `import` of them fills the same cache).
 */
function loadedPeersScript(files: string[], then = ""): string {
  return `
    import { createRequire } from "node:module";
    for (const f of ${JSON.stringify(files)}) await import(f);
    ${then}
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const loaded = ${JSON.stringify(PEERS)}.filter((p) => cache.some((k) => k.includes("/node_modules/" + p + "/")));
    console.log(JSON.stringify(loaded));
    process.exit(0);
  `;
}

describe("optional peers: bullmq and ioredis", () => {
  test("importing every wasmcell entry loads neither bullmq nor ioredis", async () => {
    const files = await entries();
    // The entries the issue names are among them (a rename in package.json must not empty this test).
    for (const e of [
      "index.ts",
      "adapters/mcp/index.ts",
      "adapters/ai/index.ts",
      "adapters/tools/index.ts",
      "queue/index.ts",
    ]) {
      assert.ok(files.includes(join(ROOT, "src", e)), e);
    }
    const r = await runNode(["--input-type=module", "-e", loadedPeersScript(files)], { cwd: ROOT });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
  });

  test("the check sees them once the Redis store is used", async () => {
    // The same child, which then makes a RedisSessionStore (to a port where nothing listens): the
    // store loads ioredis, and the check must say so, or it could never have failed above.
    const store = join(ROOT, "src/stores/redis.ts");
    const then = `
      const { RedisSessionStore } = await import(${JSON.stringify(store)});
      const s = new RedisSessionStore({ redis: "redis://127.0.0.1:1" });
      s.close().catch(() => {});
    `;
    const r = await runNode(["--input-type=module", "-e", loadedPeersScript([store], then)], { cwd: ROOT });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ["ioredis"]);
  });

  describe("used where they are not installed", () => {
    // A copy of the package (its source and package.json) beside a node_modules holding every
    // installed package but bullmq and ioredis: the modules resolve from the copy, as they would in an
    // application that installed wasmcell without them.
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "wasmcell-peers-"));
      await cp(join(ROOT, "src"), join(dir, "src"), { recursive: true });
      await cp(join(ROOT, "package.json"), join(dir, "package.json"));
      const modules = await realpath(join(ROOT, "node_modules"));
      const names = (await readdir(modules)).filter((n) => !n.startsWith(".") && !PEERS.includes(n));
      await mkdir(join(dir, "node_modules"));
      for (const n of names) await symlink(join(modules, n), join(dir, "node_modules", n));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    test("the queue client, the worker and the Redis store throw MissingDependencyError with the install command", async () => {
      const script = `
        const queue = await import(${JSON.stringify(join(dir, "src/queue/index.ts"))});
        const seen = [];
        const note = (what, e) => seen.push({ what, name: e?.name, code: e?.code, packages: e?.packages, message: e?.message });
        await queue.createQueueClient({ redis: "redis://127.0.0.1:1" }).then(() => seen.push("client made"), (e) => note("client", e));
        await queue.createWorker({ redis: "redis://127.0.0.1:1" }).then(() => seen.push("worker made"), (e) => note("worker", e));
        try { new queue.RedisSessionStore({ redis: "redis://127.0.0.1:1" }); seen.push("store made"); } catch (e) { note("store", e); }
        console.log(JSON.stringify(seen));
        process.exit(0);
      `;
      const r = await runNode(["--input-type=module", "-e", script], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const seen = JSON.parse(r.stdout) as {
        what: string;
        name: string;
        code: string;
        packages: string[];
        message: string;
      }[];
      assert.deepEqual(
        seen.map((s) => s.what),
        ["client", "worker", "store"],
      );
      for (const s of seen) {
        assert.equal(s.name, "MissingDependencyError", s.what);
        assert.equal(s.code, "MISSING_DEPENDENCY");
      }
      const [client, worker, store] = seen;
      for (const s of [client!, worker!]) {
        assert.deepEqual(s.packages, ["bullmq", "ioredis"]);
        assert.equal(
          s.message,
          "wasmcell/queue needs bullmq and ioredis, optional peer dependencies of wasmcell that are not installed: npm i bullmq ioredis",
        );
      }
      // The store needs ioredis only.
      assert.deepEqual(store!.packages, ["ioredis"]);
      assert.equal(
        store!.message,
        "RedisSessionStore needs ioredis, an optional peer dependency of wasmcell that is not installed: npm i ioredis",
      );
    });

    test("`wasmcell worker` and `wasmcell mcp --redis` say what to install and exit 3", async () => {
      const main = join(dir, "src/cli/main.ts");
      const worker = await runNode([main, "worker", "--redis", "redis://127.0.0.1:1"], { cwd: dir });
      assert.equal(worker.code, 3, worker.stderr);
      assert.match(worker.stderr, /^wasmcell: wasmcell\/queue needs bullmq and ioredis, .*: npm i bullmq ioredis\n$/);
      const env = { ...process.env, WASMCELL_SESSION_KEY: "k".repeat(32) };
      const mcp = await runNode([main, "mcp", "--http", "--session", "--redis", "redis://127.0.0.1:1"], {
        cwd: dir,
        env,
      });
      assert.equal(mcp.code, 3, mcp.stderr);
      assert.match(mcp.stderr, /wasmcell: RedisSessionStore needs ioredis, .*: npm i ioredis\n$/);
    });
  });
});
