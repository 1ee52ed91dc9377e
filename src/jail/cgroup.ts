// One cgroup v1 pair (memory + pids) per jailed process, created inside our own cgroup so the host's
// accounting stays intact (docs/seal.md pitfall 13). The jail's first process joins it from a
// one-line shell *before* exec'ing anything else, so there is no window in which a child runs outside
// the cap.
//
// The memory cap counts RSS and the jail's tmpfs pages (shmem is charged to the writer), so a guest
// cannot dodge it by filling its scratch directory. When the cap is hit the kernel's OOM killer
// SIGKILLs the process; `memory.oom_control`'s `oom_kill` counter tells us that is what happened.

import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { rmdir, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { CgroupSupport } from "./host.ts";

/**
 * Names are `wasmcell-<pid>-<this module's tag>-<n>`. The pid and a counter alone collided: a second
 * copy of this module in the same process (two dependencies that each bundle wasmcell) counts from 1
 * too, and a process SIGKILLed before it removed its cgroups leaves names a later process with the
 * same pid would want; either way `mkdir` failed with EEXIST and no jail could start. The random tag
 * is per module instance, so names stay unique without a check-then-create race.
 */
const TAG = randomBytes(4).toString("hex");
let counter = 0;

export interface CgroupStats {
  /** `memory.max_usage_in_bytes`: the peak, tmpfs included. */
  peakMemoryBytes?: number;
  /** The OOM killer fired inside this cgroup. */
  oomKilled: boolean;
}

export class JailCgroup {
  readonly memoryDir?: string;
  readonly pidsDir?: string;
  #removed = false;
  /** Nested pairs made by `child` and not yet removed (rmdir of this pair waits for them). */
  readonly #children = new Set<JailCgroup>();
  #parent: JailCgroup | undefined;
  /** What `setLimits` last wrote (a warm child's run usually asks for what its pair already has). */
  #limits: { memoryBytes: number; pidsMax: number } | undefined;
  /** `oom_kill` when this pair took its current process (`renew`): only kills after it are its. */
  #oomBase = 0;

  private constructor(memoryDir: string | undefined, pidsDir: string | undefined) {
    if (memoryDir) this.memoryDir = memoryDir;
    if (pidsDir) this.pidsDir = pidsDir;
  }

  /**
   * Makes the pair. `memoryBytes` goes to `memory.limit_in_bytes` (and the mem+swap limit, so swap is
   * no way around it); `pidsMax` caps threads and processes together.
   */
  static create(support: CgroupSupport, memoryBytes: number | undefined, pidsMax: number | undefined): JailCgroup {
    const name = `wasmcell-${process.pid}-${TAG}-${++counter}`;
    let memoryDir: string | undefined;
    let pidsDir: string | undefined;
    try {
      if (memoryBytes !== undefined && support.memoryParent) {
        memoryDir = `${support.memoryParent}/${name}`;
        mkdirSync(memoryDir);
        writeFileSync(`${memoryDir}/memory.limit_in_bytes`, String(memoryBytes));
        try {
          writeFileSync(`${memoryDir}/memory.memsw.limit_in_bytes`, String(memoryBytes));
        } catch {
          // no swap accounting on this kernel: with no swap the plain limit is the whole story
        }
      }
      if (pidsMax !== undefined && support.pidsParent) {
        pidsDir = `${support.pidsParent}/${name}`;
        mkdirSync(pidsDir);
        writeFileSync(`${pidsDir}/pids.max`, String(pidsMax));
      }
    } catch (error) {
      for (const dir of [memoryDir, pidsDir]) if (dir) tryRmdir(dir);
      throw error;
    }
    return new JailCgroup(memoryDir, pidsDir);
  }

  /**
   * A pair nested in this one (`memoryBytes` and `pidsMax` its own caps; with cgroup v1's hierarchy the
   * usage still counts toward this pair's too). Undefined when this pair has no memory cgroup.
   */
  child(memoryBytes: number, pidsMax: number): JailCgroup | undefined {
    if (!this.memoryDir || this.#removed) return undefined;
    const name = `c${++counter}`;
    const memoryDir = `${this.memoryDir}/${name}`;
    const pidsDir = this.pidsDir ? `${this.pidsDir}/${name}` : undefined;
    try {
      mkdirSync(memoryDir);
      if (pidsDir) mkdirSync(pidsDir);
    } catch (error) {
      for (const dir of [memoryDir, pidsDir]) if (dir) tryRmdir(dir);
      throw error;
    }
    const c = new JailCgroup(memoryDir, pidsDir);
    c.#parent = this;
    c.setLimits(memoryBytes, pidsMax);
    this.#children.add(c);
    return c;
  }

  /** Sets the memory cap (and mem+swap) and pids.max of this pair. */
  setLimits(memoryBytes: number, pidsMax: number): void {
    if (this.#limits?.memoryBytes === memoryBytes && this.#limits.pidsMax === pidsMax) return;
    this.#limits = undefined;
    if (this.memoryDir) {
      // Raising the plain limit above mem+swap fails, and lowering mem+swap below it too: order by direction.
      const current = Number(readFileSync(`${this.memoryDir}/memory.limit_in_bytes`, "utf8").trim());
      const writeSwap = () => {
        try {
          writeFileSync(`${this.memoryDir}/memory.memsw.limit_in_bytes`, String(memoryBytes));
        } catch {
          // no swap accounting on this kernel
        }
      };
      if (memoryBytes > current) writeSwap();
      writeFileSync(`${this.memoryDir}/memory.limit_in_bytes`, String(memoryBytes));
      if (memoryBytes <= current) writeSwap();
    }
    if (this.pidsDir) writeFileSync(`${this.pidsDir}/pids.max`, String(pidsMax));
    this.#limits = { memoryBytes, pidsMax };
  }

  /** Moves a process (host pid) into this pair. */
  adopt(pid: number): void {
    for (const file of this.procsFiles) writeFileSync(file, String(pid));
  }

  /**
   * `adopt` off the event loop: a write to `cgroup.procs` waits for the kernel to migrate the process
   * (an RCU grace period on cgroup v1: up to a millisecond or more), which must not hold up every
   * other run this process serves. Rejects as `adopt` throws (the process is gone, say).
   */
  async adoptAsync(pid: number): Promise<void> {
    for (const file of this.procsFiles) await writeFile(file, String(pid));
  }

  /** `cgroup.procs` files the pre-exec shell writes its pid into. */
  get procsFiles(): string[] {
    return [this.memoryDir, this.pidsDir].filter((d): d is string => d !== undefined).map((d) => `${d}/cgroup.procs`);
  }

  /** Every process in this pair and the pairs nested in it. */
  pids(): number[] {
    const all = new Set<number>();
    for (const c of this.#children) for (const pid of c.pids()) all.add(pid);
    for (const file of this.procsFiles) {
      try {
        for (const line of readFileSync(file, "utf8").split("\n")) if (line) all.add(Number(line));
      } catch {
        // removed already
      }
    }
    return [...all];
  }

  /** SIGKILLs every process in the cgroup (cgroup v1 has no `cgroup.kill`). */
  killAll(): void {
    for (const pid of this.pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  #read(file: string): string {
    try {
      return readFileSync(`${this.memoryDir}/${file}`, "utf8");
    } catch {
      return "";
    }
  }

  #oomKills(): number {
    return Number(/^oom_kill (\d+)/m.exec(this.#read("memory.oom_control"))?.[1] ?? 0);
  }

  /**
   * Readies an empty nested pair (the caller proved no process is left in it) for its next process,
   * instead of a new one: false when it still holds more than `maxChargedBytes` (pages its last
   * process left charged to it, which would count against the next) or is gone; then the caller
   * removes it. Otherwise its peak restarts from now and its OOM kills count from here.
   */
  renew(maxChargedBytes: number): boolean {
    if (!this.memoryDir || this.#removed || !this.#parent) return false;
    const usage = Number(this.#read("memory.usage_in_bytes").trim());
    if (!(usage <= maxChargedBytes)) return false;
    try {
      writeFileSync(`${this.memoryDir}/memory.max_usage_in_bytes`, "0");
    } catch {
      return false;
    }
    this.#oomBase = this.#oomKills();
    return true;
  }

  stats(): CgroupStats {
    if (!this.memoryDir) return { oomKilled: false };
    const peak = Number(this.#read("memory.max_usage_in_bytes").trim());
    const out: CgroupStats = { oomKilled: this.#oomKills() > this.#oomBase };
    if (Number.isFinite(peak) && peak > 0) out.peakMemoryBytes = peak;
    return out;
  }

  /** Waits (briefly) for the cgroup to empty, killing stragglers, then removes it. */
  async remove(): Promise<void> {
    if (this.#removed) return;
    this.#removed = true;
    if (this.#parent) this.#parent.#children.delete(this);
    await Promise.all([...this.#children].map((c) => c.remove()));
    // The namespaces' last processes are usually gone within a few ms of bwrap's exit: poll often
    // first, then back off (about 1 s in all).
    const pause = (i: number) => sleep(i < 20 ? 1 : 10);
    for (let i = 0; i < 120 && this.pids().length > 0; i++) {
      this.killAll();
      await pause(i);
    }
    // Off the event loop: removing a memory cgroup takes the kernel about half a millisecond, and a
    // warm parent removes a pair per run.
    for (const dir of [this.memoryDir, this.pidsDir]) {
      if (!dir) continue;
      for (let i = 0; i < 120 && !(await tryRmdirAsync(dir)); i++) await pause(i);
    }
  }
}

async function tryRmdirAsync(dir: string): Promise<boolean> {
  try {
    await rmdir(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}
