// A classic-BPF compiler for seccomp filters, in plain TypeScript (no libseccomp, no native code).
//
// The program it emits, for x86_64 only:
//   1. load `seccomp_data.arch`; anything but AUDIT_ARCH_X86_64 (i386 via `int 0x80`, …) → KILL_PROCESS
//   2. load `seccomp_data.nr`; the x32 ABI (nr ≥ 0x40000000) → KILL_PROCESS
//   3. syscalls with a fixed verdict (`clone3` → ENOSYS, `io_uring_setup` → EPERM, …)
//   4. syscalls allowed only when their arguments match (clone for threads only, prctl, ioctl)
//   5. one `jeq nr → ALLOW` per allowed syscall
//   6. the default: ERRNO(EPERM) in production, KILL_PROCESS in the "kill" test mode, so a missing
//      allowlist entry shows up as a dead process instead of a quiet EPERM.
// Every jump is local (a rule's body is a handful of instructions), so BPF's 8-bit conditional jump
// offsets never overflow however long the allowlist grows.
//
// What a filter like this can and cannot see: syscall numbers and the six argument *words*. It cannot
// follow pointers (paths, sockaddrs, clone3's struct), so paths are the mount namespace's job, and any
// syscall whose real request lives in memory (io_uring SQEs) must be denied outright.
// Argument conditions compare the low 32 bits of an argument only: every flags word we filter
// (clone's flags — the kernel itself takes `lower_32_bits` for legacy clone —, prctl's option,
// ioctl's request, which the kernel reads as `unsigned int`) lives there.

import { SYSCALLS_X86_64 } from "./syscalls-x86_64.ts";

export const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;

/** seccomp return values (`SECCOMP_RET_*`). */
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

export const EPERM = 1;
export const ENOSYS = 38;

/** What the filter does with a syscall. */
export type SeccompAction = { type: "allow" } | { type: "errno"; errno: number } | { type: "kill" };
export const ALLOW: SeccompAction = Object.freeze({ type: "allow" });
export const KILL: SeccompAction = Object.freeze({ type: "kill" });
export const errno = (n: number): SeccompAction => Object.freeze({ type: "errno", errno: n });
export const ERRNO_EPERM: SeccompAction = errno(EPERM);

/**
 * A test on the low 32 bits of one syscall argument (`arg` is 0…5).
 * - `maskedEq`: `(arg & mask) === value` (e.g. "CLONE_THREAD set and no CLONE_NEW* bit")
 * - `in`: the argument is one of `values`
 * - `notIn`: the argument is none of `values`
 */
export type ArgCondition =
  | { arg: number; op: "maskedEq"; mask: number; value: number }
  | { arg: number; op: "in"; values: readonly number[] }
  | { arg: number; op: "notIn"; values: readonly number[] };

/** A syscall allowed only when every condition holds; otherwise `otherwise` (default ERRNO(EPERM)). */
export interface ArgRule {
  syscall: string;
  when: readonly ArgCondition[];
  otherwise?: SeccompAction;
}

export interface SeccompProfile {
  name: string;
  /** Allowed whatever their arguments. */
  allow: readonly string[];
  /** Allowed only when their arguments match. */
  rules: readonly ArgRule[];
  /** A fixed verdict whatever the default (probes the runtime handles: clone3 → ENOSYS, io_uring → EPERM). */
  fixed: Readonly<Record<string, SeccompAction>>;
}

/** `struct sock_filter`: 8 bytes each. */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

// Opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20; // A = *(u32 *)(data + k)
const ALU_AND_K = 0x54; // A &= k
const JMP_JA = 0x05; // pc += k
const JMP_JEQ_K = 0x15; // pc += (A == k) ? jt : jf
const JMP_JGE_K = 0x35; // pc += (A >= k) ? jt : jf
const RET_K = 0x06; // return k

// Offsets in `struct seccomp_data` (nr u32, arch u32, ip u64, args u64[6]); x86_64 is little-endian.
const OFF_NR = 0;
const OFF_ARCH = 4;
const offArgLow = (i: number) => 16 + 8 * i;

function actionValue(action: SeccompAction): number {
  switch (action.type) {
    case "allow":
      return SECCOMP_RET_ALLOW;
    case "kill":
      return SECCOMP_RET_KILL_PROCESS;
    case "errno":
      if (!Number.isInteger(action.errno) || action.errno < 0 || action.errno > 0xffff)
        throw new RangeError(`bad errno ${action.errno}`);
      return (SECCOMP_RET_ERRNO | action.errno) >>> 0;
  }
}

export function syscallNumber(name: string): number {
  const nr = SYSCALLS_X86_64[name];
  if (nr === undefined) throw new Error(`unknown x86_64 syscall "${name}"`);
  return nr;
}

/**
 * A tiny assembler: conditional jump targets are labels, resolved to relative offsets at the end.
 * A label reference that does not fit in 8 bits is a compiler bug and throws.
 */
class Assembler {
  readonly #code: { code: number; k: number; jt: string | number; jf: string | number }[] = [];
  readonly #labels = new Map<string, number>();
  #next = 0;

  fresh(prefix: string): string {
    return `${prefix}${this.#next++}`;
  }
  label(name: string): void {
    this.#labels.set(name, this.#code.length);
  }
  ld(offset: number): void {
    this.#code.push({ code: LD_W_ABS, k: offset, jt: 0, jf: 0 });
  }
  and(mask: number): void {
    this.#code.push({ code: ALU_AND_K, k: mask >>> 0, jt: 0, jf: 0 });
  }
  jeq(k: number, jt: string | number, jf: string | number): void {
    this.#code.push({ code: JMP_JEQ_K, k: k >>> 0, jt, jf });
  }
  jge(k: number, jt: string | number, jf: string | number): void {
    this.#code.push({ code: JMP_JGE_K, k: k >>> 0, jt, jf });
  }
  ja(target: string): void {
    this.#code.push({ code: JMP_JA, k: 0, jt: target, jf: 0 });
  }
  ret(action: SeccompAction): void {
    this.#code.push({ code: RET_K, k: actionValue(action), jt: 0, jf: 0 });
  }

  finish(): BpfInstruction[] {
    const out: BpfInstruction[] = [];
    this.#code.forEach((ins, pc) => {
      const rel = (target: string | number): number => {
        if (typeof target === "number") return target;
        const at = this.#labels.get(target);
        if (at === undefined) throw new Error(`undefined label ${target}`);
        const off = at - (pc + 1);
        if (off < 0) throw new Error(`backward jump to ${target}`);
        return off;
      };
      if (ins.code === JMP_JA) {
        out.push({ code: ins.code, jt: 0, jf: 0, k: rel(ins.jt) });
        return;
      }
      const jt = rel(ins.jt);
      const jf = rel(ins.jf);
      if (jt > 255 || jf > 255) throw new Error(`jump offset over 255 at ${pc}`);
      out.push({ code: ins.code, jt, jf, k: ins.k });
    });
    if (out.length > 4096) throw new Error(`filter has ${out.length} instructions; the kernel takes at most 4096`);
    return out;
  }
}

/** Compiles a profile into BPF instructions; `defaultAction` applies to every syscall not named. */
export function compileProfile(profile: SeccompProfile, defaultAction: SeccompAction): BpfInstruction[] {
  const seen = new Set<string>();
  const claim = (name: string) => {
    syscallNumber(name);
    if (seen.has(name)) throw new Error(`profile ${profile.name}: syscall "${name}" listed twice`);
    seen.add(name);
  };
  const a = new Assembler();
  a.ld(OFF_ARCH);
  a.jeq(AUDIT_ARCH_X86_64, 1, 0);
  a.ret(KILL);
  a.ld(OFF_NR);
  a.jge(X32_SYSCALL_BIT, 0, 1);
  a.ret(KILL);

  for (const [name, action] of Object.entries(profile.fixed)) {
    claim(name);
    a.jeq(syscallNumber(name), 0, 1);
    a.ret(action);
  }

  for (const rule of profile.rules) {
    claim(rule.syscall);
    const after = a.fresh("after_");
    const fail = a.fresh("fail_");
    a.jeq(syscallNumber(rule.syscall), 0, after);
    for (const cond of rule.when) {
      if (!Number.isInteger(cond.arg) || cond.arg < 0 || cond.arg > 5)
        throw new Error(`bad argument index ${cond.arg}`);
      a.ld(offArgLow(cond.arg));
      switch (cond.op) {
        case "maskedEq":
          a.and(cond.mask);
          a.jeq(cond.value & cond.mask, 0, fail);
          break;
        case "in": {
          const ok = a.fresh("ok_");
          for (const v of cond.values) a.jeq(v, ok, 0);
          a.ja(fail);
          a.label(ok);
          break;
        }
        case "notIn":
          for (const v of cond.values) a.jeq(v, fail, 0);
          break;
      }
    }
    a.ret(ALLOW);
    a.label(fail);
    a.ret(rule.otherwise ?? errno(EPERM));
    a.label(after);
  }
  // The accumulator holds `nr` again here: a rule body is only entered when nr matched, and every
  // path through a body ends in `ret`.
  for (const name of profile.allow) {
    claim(name);
    a.jeq(syscallNumber(name), 0, 1);
    a.ret(ALLOW);
  }
  a.ret(defaultAction);
  return a.finish();
}

/** `struct sock_filter[]` as the kernel (and `bwrap --seccomp FD`) reads it. */
export function encodeFilter(program: readonly BpfInstruction[]): Buffer {
  const buf = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    buf.writeUInt16LE(ins.code, i * 8);
    buf.writeUInt8(ins.jt, i * 8 + 2);
    buf.writeUInt8(ins.jf, i * 8 + 3);
    buf.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return buf;
}

export function decodeFilter(buf: Uint8Array): BpfInstruction[] {
  if (buf.byteLength % 8 !== 0) throw new Error("a filter is a whole number of 8-byte instructions");
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: BpfInstruction[] = [];
  for (let i = 0; i < buf.byteLength; i += 8) {
    out.push({
      code: view.getUint16(i, true),
      jt: view.getUint8(i + 2),
      jf: view.getUint8(i + 3),
      k: view.getUint32(i + 4, true),
    });
  }
  return out;
}

const NAMES_BY_NUMBER = new Map(Object.entries(SYSCALLS_X86_64).map(([n, nr]) => [nr, n]));

function describeReturn(k: number): string {
  if (k === SECCOMP_RET_ALLOW) return "ALLOW";
  if (k === SECCOMP_RET_KILL_PROCESS) return "KILL_PROCESS";
  if ((k & 0xffff0000) === SECCOMP_RET_ERRNO) return `ERRNO(${k & 0xffff})`;
  return `0x${k.toString(16)}`;
}

/** A readable listing, one instruction a line (`0004: jeq #56 (clone) jt 0005 jf 0011`). */
export function disassemble(program: readonly BpfInstruction[]): string {
  const pad = (n: number) => n.toString().padStart(4, "0");
  // Name syscall numbers only where the accumulator holds `nr`: after `ld [0]`, and after a `ret`
  // (in what compileProfile emits, the instruction after a `ret` is only reached by a jump taken
  // while comparing `nr`: the next rule or allow entry).
  let holdsNr = false;
  return program
    .map((ins, pc) => {
      const target = (off: number) => pad(pc + 1 + off);
      let text: string;
      switch (ins.code) {
        case LD_W_ABS:
          holdsNr = ins.k === OFF_NR;
          text = `ld [${ins.k}]${loadComment(ins.k)}`;
          break;
        case ALU_AND_K:
          text = `and #0x${ins.k.toString(16)}`;
          break;
        case JMP_JA:
          text = `ja ${target(ins.k)}`;
          break;
        case JMP_JEQ_K:
        case JMP_JGE_K: {
          const name = holdsNr ? NAMES_BY_NUMBER.get(ins.k) : undefined;
          text = `${ins.code === JMP_JEQ_K ? "jeq" : "jge"} #0x${ins.k.toString(16)}${name ? ` (${name})` : ""} jt ${target(ins.jt)} jf ${target(ins.jf)}`;
          break;
        }
        case RET_K:
          holdsNr = true;
          text = `ret ${describeReturn(ins.k)}`;
          break;
        default:
          text = `??? code=0x${ins.code.toString(16)} jt=${ins.jt} jf=${ins.jf} k=0x${ins.k.toString(16)}`;
      }
      return `${pad(pc)}: ${text}`;
    })
    .join("\n");
}

/**
 * Runs a program the way the kernel would, for one syscall (the tests use it to check a profile's
 * verdicts without a kernel). `args` are the six argument words (low 32 bits used).
 */
export function evaluateFilter(
  program: readonly BpfInstruction[],
  data: { nr: number; arch?: number; args?: readonly number[] },
): number {
  const arch = data.arch ?? AUDIT_ARCH_X86_64;
  const args = data.args ?? [];
  const load = (k: number): number => {
    if (k === OFF_NR) return data.nr >>> 0;
    if (k === OFF_ARCH) return arch >>> 0;
    if (k >= 16 && k < 64) {
      const i = (k - 16) >> 3;
      const word = args[i] ?? 0;
      return k % 8 === 0 ? word >>> 0 : Math.floor(word / 2 ** 32) >>> 0;
    }
    throw new Error(`load from offset ${k}`);
  };
  let acc = 0;
  for (let pc = 0; pc < program.length;) {
    const ins = program[pc];
    if (!ins) break;
    switch (ins.code) {
      case LD_W_ABS:
        acc = load(ins.k);
        pc++;
        break;
      case ALU_AND_K:
        acc = (acc & ins.k) >>> 0;
        pc++;
        break;
      case JMP_JA:
        pc += 1 + ins.k;
        break;
      case JMP_JEQ_K:
        pc += 1 + (acc === ins.k ? ins.jt : ins.jf);
        break;
      case JMP_JGE_K:
        pc += 1 + (acc >= ins.k ? ins.jt : ins.jf);
        break;
      case RET_K:
        return ins.k;
      default:
        throw new Error(`unknown opcode 0x${ins.code.toString(16)}`);
    }
  }
  throw new Error("program fell off the end");
}

/** What a `ld [k]` of struct seccomp_data reads: the syscall number, the arch, or half an argument. */
function loadComment(k: number): string {
  if (k === OFF_NR) return " (nr)";
  if (k === OFF_ARCH) return " (arch)";
  if (k >= 16) return ` (arg${(k - 16) >> 3}${k % 8 === 0 ? " low" : " high"})`;
  return "";
}
