// Threat: guest code inspects or rewrites other processes' memory (ptrace, process_vm_*, /proc/N/mem).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";

describe("native", () => {
  after(closeNative);

  it("ptrace, process_vm_readv/writev, /proc/1/mem, perf_event_open and bpf are refused", async () => {
    const r = await runNative(`${PROBES}
{
  "traceme": raw(101, 0, 0, 0, 0),
  "attach_1": raw(101, 16, 1, 0, 0),
  "seize_1": raw(101, 0x4206, 1, 0, 0),
  "vm_readv": raw(310, 1, 0, 0, 0, 0, 0),
  "vm_writev": raw(311, 1, 0, 0, 0, 0, 0),
  "proc_mem": probe(lambda: open("/proc/1/mem", "rb")),
  "perf_event_open": raw(298, 0, 0, -1, -1, 0),
  "bpf": raw(321, 0, 0, 0),
  "kcmp": raw(312, 1, 2, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      traceme: "EPERM",
      attach_1: "EPERM",
      seize_1: "EPERM",
      vm_readv: "EPERM",
      vm_writev: "EPERM",
      proc_mem: "FileNotFoundError:ENOENT",
      perf_event_open: "EPERM",
      bpf: "EPERM",
      kcmp: "EPERM",
    });
  });
});
