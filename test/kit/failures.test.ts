import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  aborted,
  crashed,
  describeHostError,
  failedRun,
  HOST_ERROR_NAMES,
  lostInQueue,
  sessionLost,
  timedOut,
} from "../../src/kit/failures.ts";

describe("host verdicts", () => {
  it("names every host error (a new name is a deliberate change to this list)", () => {
    assert.deepEqual(
      [...HOST_ERROR_NAMES],
      ["TimeoutError", "AbortError", "EngineCrash", "SessionLostError", "QueueError"],
    );
    const made = [timedOut(5, "stopped"), aborted(), crashed("x"), sessionLost("y"), lostInQueue("z")].map(
      (e) => e.name,
    );
    assert.deepEqual(made.sort(), [...HOST_ERROR_NAMES].sort());
  });

  it("words a timeout once, naming the limit and how the run ended", () => {
    const stopped = timedOut(250, "stopped");
    assert.equal(stopped.kind, "timeout");
    assert.match(stopped.message, /^the run did not finish within 250 ms \(limits\.timeoutMs\) and was stopped;/);
    assert.match(timedOut(250, "terminated").message, /worker thread did not answer, so it was terminated/);
    assert.match(timedOut(250, "killed").message, /its process was killed/);
  });

  it("says where an abort came", () => {
    assert.equal(aborted().message, "the run was aborted by the caller's signal");
    assert.equal(aborted("while it waited").message, "the run was aborted by the caller's signal while it waited");
    assert.equal(aborted().kind, "aborted");
  });

  it("a lost session tells the model to open a new one", () => {
    const e = sessionLost("its worker thread was terminated");
    assert.equal(e.kind, "crashed");
    assert.match(e.message, /its worker thread was terminated\); its state is gone, open a new session$/);
  });

  it("builds the empty failure for any engine", () => {
    const r = failedRun("pyodide", { language: "python" }, aborted(), performance.now());
    assert.equal(r.ok, false);
    assert.equal(r.stats.engine, "pyodide");
    assert.deepEqual([r.stdout, r.stderr, r.files, r.outputTruncated], ["", "", [], false]);
    assert.ok(r.stats.wallMs >= 0);
  });

  it("describes host errors as Name: message", () => {
    assert.equal(describeHostError(new TypeError("bad")), "TypeError: bad");
    assert.equal(describeHostError("plain"), "plain");
  });
});
