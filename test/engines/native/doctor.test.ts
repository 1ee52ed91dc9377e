// The native tier's doctor check as a uid with no passwd entry (a container run as `--user 12345`, a
// CI runner's arbitrary uid): Python cannot find a home directory there, and matplotlib's import
// fails without one, so the check must give it one rather than call the tier unavailable.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { spawnSync } from "node:child_process";
import { nativeStatus } from "../../../src/engines/native/doctor.ts";
import { resolveOptions } from "../../../src/options/index.ts";

const UID = 54_321;
const root = process.getuid?.() === 0;
const unnamed = spawnSync("getent", ["passwd", String(UID)]).status !== 0;

describe("native doctor for a uid with no passwd entry", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-nopasswd-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(
    "python3 run as that uid still counts as available",
    { skip: !root ? "needs root to run python3 as another uid" : !unnamed && `uid ${UID} has a passwd entry here` },
    async () => {
      // The check's python3, run as the unnamed uid (setpriv: no passwd lookup, no HOME of its own).
      const python = join(dir, "python3");
      writeFileSync(
        python,
        `#!/bin/sh\nexec /usr/bin/setpriv --reuid=${UID} --regid=${UID} --clear-groups /usr/bin/python3 "$@"\n`,
      );
      chmodSync(python, 0o755);
      chmodSync(dir, 0o755);
      const status = await nativeStatus(
        resolveOptions({ seal: { bubblewrap: false, seccomp: false } }).seal,
        {},
        python,
      );
      assert.doesNotMatch(status.detail, /home directory|cannot import/, status.detail);
      assert.match(status.detail, /with numpy .*, pandas .*, matplotlib /);
    },
  );
});
