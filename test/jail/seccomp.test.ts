import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NODE_PYODIDE, PYTHON_NATIVE } from "../../src/jail/profiles.ts";
import {
  AUDIT_ARCH_X86_64,
  compileProfile,
  decodeFilter,
  disassemble,
  encodeFilter,
  ERRNO_EPERM,
  errno,
  evaluateFilter,
  KILL,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_KILL_PROCESS,
  syscallNumber,
  type SeccompProfile,
} from "../../src/jail/seccomp.ts";
import { runPython, TEST_SEAL } from "./helpers.ts";

const EPERM_RET = 0x50001;
const TINY: SeccompProfile = {
  name: "tiny",
  allow: ["read", "write"],
  rules: [
    { syscall: "clone", when: [{ arg: 0, op: "maskedEq", mask: 0x7e030080, value: 0x10000 }] },
    { syscall: "prctl", when: [{ arg: 0, op: "in", values: [15, 16] }] },
    { syscall: "ioctl", when: [{ arg: 1, op: "notIn", values: [0x5412] }] },
  ],
  fixed: { clone3: errno(38) },
};

describe("BPF compiler", () => {
  it("emits the arch check, the x32 check, fixed verdicts, argument rules, the allowlist and the default, in that order", () => {
    assert.equal(
      disassemble(compileProfile(TINY, ERRNO_EPERM)),
      [
        "0000: ld [4] (arch)",
        "0001: jeq #0xc000003e jt 0003 jf 0002",
        "0002: ret KILL_PROCESS",
        "0003: ld [0] (nr)",
        "0004: jge #0x40000000 jt 0005 jf 0006",
        "0005: ret KILL_PROCESS",
        "0006: jeq #0x1b3 (clone3) jt 0007 jf 0008",
        "0007: ret ERRNO(38)",
        "0008: jeq #0x38 (clone) jt 0009 jf 0014",
        "0009: ld [16] (arg0 low)",
        "0010: and #0x7e030080",
        "0011: jeq #0x10000 jt 0012 jf 0013",
        "0012: ret ALLOW",
        "0013: ret ERRNO(1)",
        "0014: jeq #0x9d (prctl) jt 0015 jf 0021",
        "0015: ld [16] (arg0 low)",
        "0016: jeq #0xf jt 0019 jf 0017",
        "0017: jeq #0x10 jt 0019 jf 0018",
        "0018: ja 0020",
        "0019: ret ALLOW",
        "0020: ret ERRNO(1)",
        "0021: jeq #0x10 (ioctl) jt 0022 jf 0026",
        "0022: ld [24] (arg1 low)",
        "0023: jeq #0x5412 jt 0025 jf 0024",
        "0024: ret ALLOW",
        "0025: ret ERRNO(1)",
        "0026: jeq #0x0 (read) jt 0027 jf 0028",
        "0027: ret ALLOW",
        "0028: jeq #0x1 (write) jt 0029 jf 0030",
        "0029: ret ALLOW",
        "0030: ret ERRNO(1)",
      ].join("\n"),
    );
  });

  it("encodes struct sock_filter little-endian, 8 bytes each, and decodes back", () => {
    const program = compileProfile(TINY, KILL);
    const bytes = encodeFilter(program);
    assert.equal(bytes.byteLength, program.length * 8);
    // ld [4]: code 0x20, jt 0, jf 0, k 4
    assert.equal(bytes.subarray(0, 8).toString("hex"), "2000000004000000");
    // jeq #AUDIT_ARCH_X86_64 jt 1 jf 0
    assert.equal(bytes.subarray(8, 16).toString("hex"), "150001003e0000c0");
    assert.deepEqual(decodeFilter(bytes), program);
    assert.equal(bytes.readUInt32LE(bytes.byteLength - 4), SECCOMP_RET_KILL_PROCESS);
  });

  it("gives the verdicts the kernel would", () => {
    const p = compileProfile(TINY, ERRNO_EPERM);
    const nr = syscallNumber;
    assert.equal(evaluateFilter(p, { nr: nr("read") }), SECCOMP_RET_ALLOW);
    assert.equal(evaluateFilter(p, { nr: nr("socket") }), EPERM_RET);
    assert.equal(evaluateFilter(p, { nr: nr("read"), arch: 0x40000003 /* i386 */ }), SECCOMP_RET_KILL_PROCESS);
    assert.equal(evaluateFilter(p, { nr: 0x40000000 + nr("read") /* x32 */ }), SECCOMP_RET_KILL_PROCESS);
    assert.equal(evaluateFilter(p, { nr: nr("clone3") }), 0x50026);
    // glibc's pthread_create flags: CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
    assert.equal(evaluateFilter(p, { nr: nr("clone"), args: [0x3d0f00] }), SECCOMP_RET_ALLOW);
    // fork: CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD
    assert.equal(evaluateFilter(p, { nr: nr("clone"), args: [0x1200011] }), EPERM_RET);
    // a thread in a new user namespace
    assert.equal(evaluateFilter(p, { nr: nr("clone"), args: [0x3d0f00 | 0x10000000] }), EPERM_RET);
    // only the low 32 bits of the flags word are compared
    assert.equal(evaluateFilter(p, { nr: nr("clone"), args: [2 ** 32 + 0x3d0f00] }), SECCOMP_RET_ALLOW);
    assert.equal(evaluateFilter(p, { nr: nr("prctl"), args: [15] }), SECCOMP_RET_ALLOW);
    assert.equal(evaluateFilter(p, { nr: nr("prctl"), args: [22 /* PR_SET_SECCOMP */] }), EPERM_RET);
    assert.equal(evaluateFilter(p, { nr: nr("ioctl"), args: [0, 0x5401 /* TCGETS */] }), SECCOMP_RET_ALLOW);
    assert.equal(evaluateFilter(p, { nr: nr("ioctl"), args: [0, 0x5412 /* TIOCSTI */] }), EPERM_RET);
    assert.equal(evaluateFilter(compileProfile(TINY, KILL), { nr: nr("socket") }), SECCOMP_RET_KILL_PROCESS);
    // a planned denial answers EPERM in the kill mode too
    assert.equal(evaluateFilter(compileProfile(PYTHON_NATIVE, KILL), { nr: nr("socket") }), EPERM_RET);
  });

  it("rejects unknown and duplicated syscall names", () => {
    assert.throws(
      () => compileProfile({ ...TINY, allow: ["read", "no_such_call"] }, KILL),
      /unknown x86_64 syscall "no_such_call"/,
    );
    assert.throws(() => compileProfile({ ...TINY, allow: ["read", "read"] }, KILL), /listed twice/);
    assert.throws(() => compileProfile({ ...TINY, allow: ["clone"] }, KILL), /listed twice/);
  });

  for (const profile of [NODE_PYODIDE, PYTHON_NATIVE]) {
    it(`${profile.name}: denies what the jail must never do, allows threads`, () => {
      const p = compileProfile(profile, KILL);
      assert.ok(p.length < 4096);
      for (const name of [
        "socket",
        "connect",
        "bind",
        "fork",
        "kill",
        "tkill",
        "ptrace",
        "process_vm_readv",
        "unshare",
        "setns",
        "mount",
        "pivot_root",
        "chroot",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "keyctl",
        "memfd_create",
        "open_by_handle_at",
        "personality",
        "setuid",
        "init_module",
        "execveat",
      ]) {
        const verdict = evaluateFilter(p, { nr: syscallNumber(name) });
        assert.notEqual(verdict, SECCOMP_RET_ALLOW, `${name} must not be allowed`);
      }
      for (const name of ["io_uring_setup", "vfork"]) {
        assert.notEqual(evaluateFilter(p, { nr: syscallNumber(name) }), SECCOMP_RET_ALLOW, name);
      }
      assert.equal(evaluateFilter(p, { nr: syscallNumber("clone"), args: [0x3d0f00] }), SECCOMP_RET_ALLOW);
      assert.equal(evaluateFilter(p, { nr: syscallNumber("clone"), args: [0x1200011] }), EPERM_RET);
      assert.equal(evaluateFilter(p, { nr: syscallNumber("wait4") }), SECCOMP_RET_ALLOW, "bwrap's reaper needs wait4");
      assert.equal(evaluateFilter(p, { nr: syscallNumber("read"), arch: AUDIT_ARCH_X86_64 }), SECCOMP_RET_ALLOW);
    });
  }
});

describe("the filter in a jailed process", () => {
  const probe = [
    "import os, socket, ctypes",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "def attempt(name, fn):",
    "    try:",
    "        fn(); print(name, 'ALLOWED')",
    "    except OSError as e:",
    "        print(name, type(e).__name__, e.errno)",
    "attempt('socket', lambda: socket.socket())",
    "attempt('fork', lambda: os.fork())",
    "r = libc.syscall(41, 2, 1, 0); print('raw-socket', r, ctypes.get_errno())",
    "r = libc.syscall(57); print('raw-fork', r, ctypes.get_errno())",
  ].join("\n");

  it("enforce mode: socket and fork fail with EPERM, from Python and from raw syscalls", async () => {
    const r = await runPython(probe, { seal: { ...TEST_SEAL, seccomp: "enforce" } });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, "socket PermissionError 1\nfork PermissionError 1\nraw-socket -1 1\nraw-fork -1 1\n");
    assert.equal(r.code, 0);
  });

  it("kill mode: the first unlisted syscall (getpriority) kills the process with SIGSYS", async () => {
    const r = await runPython(
      "import os\nprint('before', flush=True)\nos.getpriority(os.PRIO_PROCESS, 0)\nprint('after')",
    );
    assert.equal(r.stdout, "before\n");
    assert.equal(r.signal, "SIGSYS");
    assert.equal(r.code, null);
  });
});
