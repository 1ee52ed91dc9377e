// `wasmcell doctor` says when runtime files will be staged: as root, with the package installed under
// a 0700 directory, the jail's uid cannot reach the sidecar, harness and driver, so doctor names them,
// where the copies go, how big they are, and whether the drop uid can read the copies; a store the
// drop uid cannot reach, or a file that is not the package's own, is reported as failing, with the
// Python tiers marked unavailable.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stagingStatus } from "../../src/jail/index.ts";
import { RESOLVED_DEFAULT_SEAL } from "../../src/options/index.ts";
import { STAGE_ROOT } from "../../src/jail/stage.ts";
import { jailReachableTempDir } from "../helpers/tmp.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const isRoot = process.geteuid?.() === 0;

describe("doctor: staging of runtime files", () => {
  it("not needed when the jail's uid reads the files where they are", () => {
    const dir = jailReachableTempDir("wasmcell-stage-status-");
    try {
      const file = join(dir, "f");
      writeFileSync(file, "x", { mode: 0o644 });
      chmodSync(dir, 0o755); // mkdtemp made it 0700
      const s = stagingStatus([file], RESOLVED_DEFAULT_SEAL);
      assert.equal(s.needed, false);
      assert.equal(s.available, true);
      assert.match(s.detail, isRoot ? /not needed: uid 65534 reads every runtime file/ : /the host is not root/);
      assert.equal(
        stagingStatus([file], { ...RESOLVED_DEFAULT_SEAL, dropPrivileges: false }).detail,
        isRoot
          ? "not needed: the uid drop is off, the jail reads the files as installed"
          : "not needed: the host is not root, the jail reads the files as installed",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe(
    "a checkout under a 0700 directory, as root",
    { skip: !isRoot && "only a root host drops to uid 65534" },
    () => {
      const dir = mkdtempSync(join(tmpdir(), "wasmcell-0700-doctor-"));
      after(() => rmSync(dir, { recursive: true, force: true }));
      const project = join(dir, "project");
      mkdirSync(project);
      cpSync(join(root, "src"), join(project, "src"), { recursive: true });
      cpSync(join(root, "package.json"), join(project, "package.json"));
      symlinkSync(join(root, "node_modules"), join(project, "node_modules"));

      const inProject = (script: string) => {
        const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
          cwd: project,
          encoding: "utf8",
          timeout: 120_000,
        });
        assert.equal(r.status, 0, r.stderr);
        return r.stdout;
      };

      it("doctor says the runtime files are staged, where, how big, and that the jail's uid reads the copies", () => {
        assert.equal(statSync(dir).mode & 0o777, 0o700);
        const report = JSON.parse(
          inProject(`
          import { doctor } from "./src/engines/doctor.ts";
          const r = await doctor();
          console.log(JSON.stringify({ staging: r.staging, engines: r.engines }));`),
        );
        const s = report.staging;
        assert.equal(s.needed, true);
        assert.equal(s.available, true, s.detail);
        assert.equal(s.root, STAGE_ROOT);
        const names = s.paths.map((p: { path: string }) => p.path.slice(project.length));
        for (const f of [
          "/src/engines/pyodide/sidecar",
          "/src/engines/lib/python/harness.py",
          "/src/engines/native/driver.py",
        ])
          assert.ok(names.includes(f), `${f} in ${names.join(", ")}`);
        for (const p of s.paths) {
          assert.ok(p.staged.startsWith(`${STAGE_ROOT}/`), p.staged);
          assert.ok(p.bytes > 0);
        }
        assert.ok(s.bytes >= s.paths.reduce((a: number, p: { bytes: number }) => a + p.bytes, 0));
        // The first directory the uid cannot search on the way to one of the staged paths: this 0700
        // one, a 0700 TMPDIR above it, or a 0700 directory above this checkout (the Node binary's).
        const blocked =
          /runtime path\(s\), [\d.]+ MB, that uid 65534 cannot reach \(directory (\S+) is not searchable/.exec(
            s.detail,
          );
        assert.ok(blocked && s.paths.some((p: { path: string }) => p.path.startsWith(`${blocked[1]}/`)), s.detail);
        assert.match(s.detail, new RegExp(`are staged under ${STAGE_ROOT} .*uid 65534 reads the copies`));
        for (const e of report.engines) assert.doesNotMatch(e.detail, /runtime files unreachable/);

        // The CLI prints it.
        const cli = spawnSync(process.execPath, [join(project, "src/cli/main.ts"), "doctor"], {
          cwd: project,
          encoding: "utf8",
        });
        assert.match(cli.stdout, /runtime files \(for the jail's uid\):\n {2}ok {2}staging +\d+ runtime path\(s\)/);
      });

      it("a store the jail's uid cannot reach, or a file that is not the package's own, is a failure naming why", () => {
        const out = JSON.parse(
          inProject(`
          import { doctor } from "./src/engines/doctor.ts";
          import { stagingStatus } from "./src/jail/index.ts";
          import { StageStore } from "./src/jail/stage-store.ts";
          import { RESOLVED_DEFAULT_SEAL } from "./src/options/index.ts";
          import { writeFileSync } from "node:fs";
          const hidden = new StageStore(${JSON.stringify(join(dir, "store"))});
          const own = ${JSON.stringify(join(dir, "secret.txt"))};
          writeFileSync(own, "the host's own data");
          const r = await doctor({ stageStore: hidden });
          console.log(JSON.stringify([r, stagingStatus([own], RESOLVED_DEFAULT_SEAL, hidden)]));`),
        );
        const [report, notOurs] = out;
        assert.equal(report.staging.needed, true);
        assert.equal(report.staging.available, false);
        assert.match(
          report.staging.detail,
          /the staged copy of .*harness\.py is not readable: directory .* is not searchable/,
        );
        for (const engine of ["pyodide", "native"]) {
          const e = report.engines.find((x: { engine: string }) => x.engine === engine);
          assert.equal(e.available, false);
          assert.match(e.detail, /^runtime files unreachable by the jail: .* cannot all be staged/);
        }
        assert.equal(notOurs.available, false);
        assert.match(notOurs.detail, /secret\.txt is not the package's own file, so it is never staged/);
      });
    },
  );
});
