// Threat: guest code creates namespaces (a user namespace gives it capabilities over new kernel
// surface: mounts, netfilter, …) or joins someone else's.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";

describe("native", () => {
  after(closeNative);

  it("unshare, setns, clone with CLONE_NEW*, mount, chroot and pivot_root are refused", async () => {
    const r = await runNative(`${PROBES}
{
  "unshare_user": raw(272, 0x10000000),
  "unshare_net": raw(272, 0x40000000),
  "unshare_mount": raw(272, 0x00020000),
  "setns": raw(308, 0, 0),
  "setns_newpid": raw(308, 0, 0x20000000),
  "clone_thread_newuser": raw(56, 0x3d0f00 | 0x10000000, 0, 0, 0, 0),
  "clone_newpid_newns": raw(56, 0x20000000 | 0x00020000 | 17, 0, 0, 0, 0),
  "mount": raw(165, 0, 0, 0, 0, 0),
  "chroot": raw(161, 0),
  "pivot_root": raw(155, 0, 0),
  "open_tree": raw(428, 0, 0, 0),
  "fsopen": raw(430, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      unshare_user: "EPERM",
      unshare_net: "EPERM",
      unshare_mount: "EPERM",
      setns: "EPERM",
      // The warm parent's filter allows setns to a PID namespace (back to its own after each fork).
      setns_newpid: "EPERM",
      clone_thread_newuser: "EPERM",
      // What the warm parent's own filter allows (it clones each child into new namespaces): the
      // child's filter, stacked on it, must not.
      clone_newpid_newns: "EPERM",
      mount: "EPERM",
      chroot: "EPERM",
      pivot_root: "EPERM",
      open_tree: "EPERM",
      fsopen: "EPERM",
    });
  });
});
