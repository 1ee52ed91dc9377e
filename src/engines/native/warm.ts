// A warm parent on the host side: one jailed parent.py per native slot (or per session), the
// handshake for each of its children, and the one run each stateless child serves (parent.py says
// what the parent and the child do; this file what the host does around them).
//
// A child, from the host: the parent says `ready <id> <pid>`; the host finds that process among the
// jail's (its pid in the parent's namespace is in /proc/<pid>/status), moves it into a cgroup pair of
// its own nested in the jail's (memory and pids counted for the child alone: the OOM killer picks in
// there, never the parent), and waits. A run sets that pair's caps to the run's limits, sends the
// request, and ends when the parent says `exit <id> <status> <token>` and the token's fence has come
// through the three pipes. Then the pair must be empty (nothing of the child runs on); if it is not,
// or the parent dies, the parent is retired and the pool starts another.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Duplex } from "node:stream";
import { EngineUnavailableError } from "../../core/errors.ts";
import type { Limits } from "../../core/types.ts";
import {
  PYTHON_NATIVE_CHILD,
  PYTHON_NATIVE_CHILD_NET,
  PYTHON_NATIVE_PARENT,
  seccompFilter,
  SIGNALS_BY_NUMBER,
  spawnJailed,
  type JailCgroup,
  type JailExit,
  type JailedProcess,
} from "../../jail/index.ts";
import type { InstalledLibrary } from "../../library/library.ts";
import type { NetworkProxy } from "../../network/proxy.ts";
import type { ResolvedSeal } from "../../options/index.ts";
import type { PythonLayout } from "./binds.ts";
import { Fence } from "./fence.ts";
import { ADDRESS_SPACE_RESERVE, nativeJailSpec, openNetDir, PARENT, withProxy, type NetDir } from "./jail.ts";

/** What the parent itself may use beyond a child's memory (its imports: ~150 MB with the default stack). */
const PARENT_MEMORY_MB = 512;
/** How long a parent may take to import its stack before it counts as failed to start. */
const START_TIMEOUT_MS = 60_000;
/** A child's pids.max (threads count): as a cold jail's. */
const CHILD_PIDS = 32;
/**
 * A child's pair is reused for a later child only if what is still charged to it once the child is
 * gone (page cache it first read) is at most this: that much would count against the next child.
 */
const REUSE_CHARGED_BYTES = 4 * 1024 * 1024;

export interface WarmParentOptions {
  layout: PythonLayout;
  seal: ResolvedSeal;
  /** The limits the parent is built for: a run fits when its memory and file caps are no larger. */
  limits: Limits;
  library: InstalledLibrary | undefined;
  preload: readonly string[];
  network: boolean;
}

/** How a child ended, as the host saw it. */
export interface ChildEnd {
  /** Everything the child wrote on its result pipe (up to the cap), and whether it wrote more. */
  result: string;
  resultOverflow: boolean;
  /** The child's end, in a jail's terms (its own cgroup's OOM count and peak). */
  exit: JailExit;
  /** A session turn that ended with the turn (the child lives on), not with the child. */
  turn: boolean;
}

export interface ChildRun {
  request: Record<string, unknown>;
  limits: Limits;
  /** The child's result pipe bytes (display lines, then the result line), as they come. */
  onResult: (chunk: Buffer) => void;
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
  /** The first request of a session's child (it then serves turns until it ends). */
  session?: boolean;
}

interface Ready {
  id: number;
  cgroup: JailCgroup | undefined;
  /** Settles once the child is in its cgroup pair (or is known gone): a run awaits it before its request. */
  adopted: Promise<void>;
}

/** One set of the pipes children write on (parent.py's PIPE_SETS): child n writes on set n % 2. */
interface PipeSet {
  result: Fence;
  stdout: Fence;
  stderr: Fence;
}

const setOf = (id: number): 0 | 1 => (id % 2) as 0 | 1;

/** The parent's `hello`, once warm: how many modules it holds, their names, and the standard library's. */
interface Hello {
  modules: number;
  stdlib: ReadonlySet<string>;
  loaded: ReadonlySet<string>;
}

/** A list of module names from a hello: at most `max`, each matching `shape`, or undefined. */
function names(raw: unknown, max: number, shape: RegExp): ReadonlySet<string> | undefined {
  if (!Array.isArray(raw) || raw.length > max) return undefined;
  if (!raw.every((n) => typeof n === "string" && shape.test(n))) return undefined;
  return new Set(raw as string[]);
}

/**
 * A hello line's JSON, bounded, or undefined: the standard library's top-level names (at most
 * 2,000, each a plain identifier) and the modules the parent holds (at most 5,000, each a dotted
 * name of at most 200 characters).
 */
export function parseHello(json: string): Hello | undefined {
  let raw: { modules?: unknown; stdlib?: unknown; loaded?: unknown };
  try {
    raw = JSON.parse(json) as typeof raw;
  } catch {
    return undefined;
  }
  const modules = Number(raw.modules);
  const stdlib = names(raw.stdlib, 2000, /^[A-Za-z_][A-Za-z0-9_]{0,99}$/);
  const loaded = names(raw.loaded, 5000, /^(?=.{1,200}$)[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/);
  if (!Number.isSafeInteger(modules) || !stdlib || !loaded) return undefined;
  return { modules, stdlib, loaded };
}

type Exited = { status: number; token: string };

export class WarmParent {
  readonly jail: JailedProcess;
  readonly proxy: NetworkProxy | undefined;
  readonly options: WarmParentOptions;
  /** How long the parent took to start and import its stack, and how many modules it then held (doctor, bench). */
  startedMs = 0;
  modules = 0;
  /** The interpreter's standard-library top-level module names, as the parent said in its hello (route.ts). */
  stdlib: ReadonlySet<string> = new Set();
  /** The modules the parent holds (its `sys.modules`), as it said in its hello (route.ts). */
  loaded: ReadonlySet<string> = new Set();
  readonly #sets: readonly [PipeSet, PipeSet];
  #control = "";
  #ready: Ready | undefined;
  #readyWaiters: ((r: Ready | undefined) => void)[] = [];
  #exits = new Map<number, (e: Exited) => void>();
  #exited = new Map<number, Exited>();
  #dead = false;
  #retired = false;
  #log = "";
  /** A child serving a session's turns (this parent then serves nothing else). */
  #sessionId: number | undefined;

  private constructor(jail: JailedProcess, proxy: NetworkProxy | undefined, options: WarmParentOptions) {
    this.jail = jail;
    this.proxy = proxy;
    this.options = options;
    const set = (): PipeSet => ({ result: new Fence(), stdout: new Fence(), stderr: new Fence() });
    this.#sets = [set(), set()];
    this.#wire();
  }

  /** Starts a parent and waits until it has imported its stack and made its first child. */
  static async start(options: WarmParentOptions): Promise<WarmParent> {
    const t0 = performance.now();
    // Two children may be alive at once (one torn down while the next runs), each capped by its own
    // cgroup pair at the run's memory: the jail's cap holds both and the parent.
    const limits = { ...options.limits, memoryMb: 2 * options.limits.memoryMb + PARENT_MEMORY_MB };
    const spec = nativeJailSpec(options.layout, options.seal, limits, options.library);
    let net: NetDir | undefined;
    if (options.network) {
      net = await openNetDir(options.seal);
      withProxy(spec, net);
    }
    spec.args = ["-I", "-u", PARENT.jail, ...spec.args!.slice(3)];
    spec.roBinds = [...(spec.roBinds ?? []), { host: PARENT.host, jail: PARENT.jail }];
    spec.seccompProfile = PYTHON_NATIVE_PARENT;
    spec.capAdd = ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"];
    // 4 result, 5 stdout, 6 stderr (even children's, fenced), 7 control, 8–10 the odd children's
    spec.extraPipes = 7;
    spec.pidsMax = CHILD_PIDS + 16;
    // The parent runs no guest code and lives across runs: each child sets its own CPU limit.
    if (spec.rlimits) delete spec.rlimits.cpuSeconds;
    let jail: JailedProcess;
    try {
      jail = await spawnJailed(spec);
    } catch (error) {
      await net?.close();
      throw error;
    }
    if (net) {
      const close = () => net.close();
      jail.exited.then(close, close).catch(() => undefined);
    }
    const childFilter =
      options.seal.seccomp === false
        ? ""
        : seccompFilter(options.network ? PYTHON_NATIVE_CHILD_NET : PYTHON_NATIVE_CHILD, options.seal.seccomp).toString(
            "base64",
          );
    jail.child.stdin.write(
      JSON.stringify({
        preload: options.preload,
        childFilter,
        network: options.network,
        scratchBytes: (Math.ceil((2 * options.limits.maxFileBytes) / (1024 * 1024)) + 32) * 1024 * 1024,
      }) + "\n",
    );
    const parent = new WarmParent(jail, net?.proxy, options);
    const hello = await new Promise<Hello | Error>((resolve) => {
      const timer = setTimeout(() => resolve(new Error("it did not finish its imports in time")), START_TIMEOUT_MS);
      parent.#hello = (h) => {
        clearTimeout(timer);
        resolve(h);
      };
      jail.exited.then(
        (e) => {
          clearTimeout(timer);
          resolve(new Error(`it exited (${e.signal ?? `code ${e.code}`}) before it was warm`));
        },
        () => undefined,
      );
    });
    if (hello instanceof Error) {
      jail.kill();
      await jail.exited;
      const log = parent.#log.trim();
      throw new EngineUnavailableError(
        "native",
        `the warm parent (python.preload ${JSON.stringify(options.preload)}) failed to start: ${hello.message}${log ? `\n${log.split("\n").slice(-5).join("\n")}` : ""}`,
      );
    }
    parent.startedMs = performance.now() - t0;
    parent.modules = hello.modules;
    parent.stdlib = hello.stdlib;
    parent.loaded = hello.loaded;
    parent.#park(true);
    return parent;
  }

  #hello: ((h: Hello | Error) => void) | undefined;

  /**
   * An idle parent must not keep the host's event loop alive: a program that forgets `close()` still
   * exits (and `--die-with-parent` takes the jail with it). Its handles are ref'd while it serves.
   */
  #park(parked: boolean): void {
    const handles = [
      this.jail.child,
      this.jail.child.stdin,
      this.jail.child.stdout,
      this.jail.child.stderr,
      ...this.jail.pipes,
    ] as { ref?: () => void; unref?: () => void }[];
    for (const h of handles) (parked ? h.unref : h.ref)?.call(h);
  }

  #wire(): void {
    const pipes = this.jail.pipes as Duplex[];
    const control = pipes[3]!;
    for (const [set, at] of [
      [this.#sets[0], 0],
      [this.#sets[1], 4],
    ] as const) {
      pipes[at]!.on("data", (c: Buffer) => set.result.push(c));
      pipes[at + 1]!.on("data", (c: Buffer) => set.stdout.push(c));
      pipes[at + 2]!.on("data", (c: Buffer) => set.stderr.push(c));
    }
    const log = (c: Buffer) => {
      this.#log = (this.#log + c.toString("utf8")).slice(-4000);
    };
    this.jail.child.stdout.on("data", log);
    this.jail.child.stderr.on("data", log);
    control.on("data", (c: Buffer) => {
      this.#control += c.toString("latin1");
      // A line longer than any the parent writes is not the parent's: retire it (its hello, the
      // longest, is ~20 KB with the default stack: its module names).
      if (this.#control.length > 256 * 1024) this.retire();
      let nl: number;
      while ((nl = this.#control.indexOf("\n")) >= 0) {
        const line = this.#control.slice(0, nl);
        this.#control = this.#control.slice(nl + 1);
        this.#onControl(line);
      }
    });
    const gone = () => {
      this.#dead = true;
      for (const w of this.#readyWaiters.splice(0)) w(undefined);
      for (const [, resolve] of this.#exits) resolve({ status: -1, token: "" });
      this.#exits.clear();
    };
    this.jail.exited.then(gone, gone);
  }

  #onControl(line: string): void {
    const hello = /^hello (\{.*\})$/.exec(line);
    if (hello && this.#hello) {
      this.#hello(parseHello(hello[1]!) ?? new Error(`it said ${JSON.stringify(line.slice(0, 200))}`));
      this.#hello = undefined;
      return;
    }
    let m = /^ready (\d{1,9}) (\d{1,9})$/.exec(line);
    if (m) {
      const id = Number(m[1]);
      const ready: Ready = { id, ...this.#adopt(Number(m[2])) };
      const w = this.#readyWaiters.shift();
      if (w) w(ready);
      else this.#ready = ready;
      return;
    }
    m = /^exit (\d{1,9}) (-?\d{1,4}) ([0-9a-f]{32})$/.exec(line);
    if (m) {
      const e = { status: Number(m[2]), token: m[3]! };
      const resolve = this.#exits.get(Number(m[1]));
      this.#exits.delete(Number(m[1]));
      if (resolve) resolve(e);
      else this.#exited.set(Number(m[1]), e);
      return;
    }
    this.retire();
  }

  /**
   * Moves the child (its pid in the parent's PID namespace) into a cgroup pair of its own. PID
   * namespaces, outermost first: the host's, the jail's, the parent's (it is pid 1 there), the child's.
   */
  #adopt(parentNsPid: number): Pick<Ready, "cgroup" | "adopted"> {
    const host = this.jail.hostPids().find((pid) => {
      if (this.#jailOwn.has(pid)) return false;
      try {
        const ns = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]?.split(/\s+/);
        // bubblewrap, the waiter and the parent live as long as the jail: never a child, never read again.
        if (ns && ns.length < 4) this.#jailOwn.add(pid);
        return ns?.length === 4 && Number(ns[2]) === parentNsPid;
      } catch {
        return false;
      }
    });
    const none = { cgroup: undefined, adopted: Promise.resolve() };
    if (host === undefined) return none;
    const cgroup =
      this.#emptyCgroups.pop() ?? this.jail.childCgroup(this.options.limits.memoryMb * 1024 * 1024, CHILD_PIDS);
    if (!cgroup) return none;
    // A rejection: the child is gone already, and its exit is on the way.
    return { cgroup, adopted: cgroup.adoptAsync(host).catch(() => undefined) };
  }

  /**
   * Pairs an earlier child left, proven empty and renewed (#afterChild): the next child takes one
   * instead of a new pair. Making and removing a pair per run (two mkdir, two rmdir) cost the host
   * ~0.6 ms of CPU in a profile, and the kernel its memory cgroup's setup and teardown; a parent has
   * at most three children alive, so this stays small.
   */
  readonly #emptyCgroups: JailCgroup[] = [];

  /** The jail's own processes (not children), by host pid: #adopt skips them. */
  readonly #jailOwn = new Set<number>();

  /** The parent's own resident memory (pid 1 of its own namespace, inside the jail's), or undefined when unreadable. */
  rssBytes(): number | undefined {
    for (const pid of this.jail.hostPids()) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        const ns = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/);
        if (ns?.length !== 3 || ns[2] !== "1") continue;
        const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
        return kb ? Number(kb) * 1024 : undefined;
      } catch {
        // gone
      }
    }
    return undefined;
  }

  get alive(): boolean {
    return !this.#dead && !this.#retired && !this.#retiring;
  }

  /** A child is waiting for its request now (the bench and tests watch the refill). */
  get readyNow(): boolean {
    return this.alive && this.#ready !== undefined;
  }

  /** The parent's own output (its errors), for a crash message. */
  get log(): string {
    return this.#log;
  }

  /** Whether a run with these limits fits what this parent was built for. */
  fits(limits: Limits): boolean {
    return limits.memoryMb <= this.options.limits.memoryMb && limits.maxFileBytes <= this.options.limits.maxFileBytes;
  }

  /** Ends this parent (and any child): the pool replaces it. */
  retire(): void {
    this.#retired = true;
    this.jail.kill();
  }

  #nextChild(): Promise<Ready | undefined> {
    if (!this.alive) return Promise.resolve(undefined);
    const r = this.#ready;
    if (r) {
      this.#ready = undefined;
      return Promise.resolve(r);
    }
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  #exitOf(id: number): Promise<Exited> {
    const done = this.#exited.get(id);
    if (done) {
      this.#exited.delete(id);
      return Promise.resolve(done);
    }
    if (this.#dead) return Promise.resolve({ status: -1, token: "" });
    return new Promise((resolve) => this.#exits.set(id, resolve));
  }

  /** The child that is serving now, for a kill at the deadline (its cgroup pair, or else the whole parent). */
  #current: Ready | undefined;

  /** SIGKILLs the child serving now (the deadline, an abort); without a cgroup pair, the whole parent. */
  killChild(): void {
    const cg = this.#current?.cgroup;
    if (cg) cg.killAll();
    else this.retire();
  }

  /**
   * Runs one request in a fresh child (or, `session`, starts a session's child with it). Resolves when
   * the child is gone (stateless) or the turn is over (session).
   */
  async run(run: ChildRun): Promise<ChildEnd> {
    this.#inRuns++;
    try {
      return await this.#run(run);
    } finally {
      this.#leaveRun();
    }
  }

  async #run(run: ChildRun): Promise<ChildEnd> {
    const ready = await this.#nextChild();
    if (!ready) return this.#lost();
    // The last child on this child's pipe set must be gone and accounted for before this one is given
    // a request. The one on the other set may still be torn down meanwhile: it is SIGKILLed, in
    // namespaces of its own, on pipes of its own. With a network, both: the proxy is one per parent
    // and takes whichever run is attached (see #settledAll).
    if (this.proxy) await this.#settledAll();
    else await this.#settling[setOf(ready.id)];
    await ready.adopted;
    // A parent found wrong meanwhile (#retireWhenIdle) still serves this run, already admitted, on
    // its own pipe set; one that is gone cannot.
    if (this.#dead || this.#retired) return this.#lost();
    this.#current = ready;
    if (run.session) this.#sessionId = ready.id;
    ready.cgroup?.setLimits(run.limits.memoryMb * 1024 * 1024, CHILD_PIDS);
    const setup = {
      fileSizeBytes: Math.max(run.limits.maxFileBytes, 1024 * 1024),
      addressSpaceBytes: run.limits.memoryMb * 1024 * 1024 + ADDRESS_SPACE_RESERVE,
      // A session's child lives across turns: its CPU is bounded per turn by the deadline instead.
      ...(run.session ? {} : { cpuSeconds: Math.ceil(run.limits.timeoutMs / 1000) + 2 }),
    };
    return this.#serve(ready, { ...run.request, setup, session: run.session === true }, run, run.session === true);
  }

  /**
   * A session's next turn holds to its own `memoryMb`: its child's cgroup pair gets the turn's cap.
   * False when the kernel refused it: the child already holds more than that (the session is left as
   * it was). The address-space rlimit stays the first turn's (a process may only lower it).
   */
  capTurn(memoryMb: number): boolean {
    const cg = this.#current?.cgroup;
    if (!cg) return true;
    try {
      cg.setLimits(memoryMb * 1024 * 1024, CHILD_PIDS);
      return true;
    } catch {
      return false;
    }
  }

  /** A session's next turn, in the child its first run started. */
  async turn(run: ChildRun): Promise<ChildEnd> {
    const id = this.#sessionId;
    if (id === undefined || !this.alive) return this.#lost();
    this.#inRuns++;
    try {
      return await this.#serve(this.#current!, run.request, run, true);
    } finally {
      this.#leaveRun();
    }
  }

  /** Runs (or turns) between their start and their answer: a retirement waits for them. */
  #inRuns = 0;

  #leaveRun(): void {
    this.#inRuns--;
    if (this.#retiring && this.#inRuns === 0) this.retire();
  }

  async #serve(ready: Ready, request: Record<string, unknown>, run: ChildRun, session: boolean): Promise<ChildEnd> {
    this.#park(false);
    try {
      return await this.#serveRefd(ready, request, run, session);
    } finally {
      this.#park(true);
    }
  }

  async #serveRefd(ready: Ready, request: Record<string, unknown>, run: ChildRun, session: boolean): Promise<ChildEnd> {
    const chunks: Buffer[] = [];
    const overflow = false;
    const fences = this.#sets[setOf(ready.id)];
    fences.result.sink = run.onResult;
    fences.stdout.sink = run.onStdout;
    fences.stderr.sink = run.onStderr;
    // The run's own fence (the child writes it after its result): the run is answered then, without
    // waiting for the child's teardown. The parent's fence after the child's end is what the next
    // child on its pipe set waits for (#settling).
    const token = randomBytes(16).toString("hex");
    const line = JSON.stringify({ ...request, fence: token });
    this.jail.child.stdin.write(`${ready.id} ${session ? "s" : "r"} ${line}\n`);
    const exit = this.#exitOf(ready.id);
    const fenced = (t: string) => Promise.all([fences.result.until(t), fences.stdout.until(t), fences.stderr.until(t)]);
    const first = await Promise.race([fenced(token).then(() => "turn" as const), exit]);
    const ended = first === "turn" ? undefined : first;
    const stats = () => ready.cgroup?.stats() ?? { oomKilled: false };
    const peakOf = (st: { peakMemoryBytes?: number }) =>
      st.peakMemoryBytes !== undefined ? { peakMemoryBytes: st.peakMemoryBytes } : {};
    if (first === "turn") {
      for (const f of [fences.result, fences.stdout, fences.stderr]) f.sink = undefined;
      const text = Buffer.concat(chunks).toString("utf8");
      const exit0 = { code: 0, signal: null, timedOut: false, oomKilled: false, ...peakOf(stats()) };
      if (session) return { result: text, resultOverflow: overflow, turn: true, exit: exit0 };
      // Answered: the child is done with this run; end it now, and settle it before the next child.
      this.killChild();
      this.#settling[setOf(ready.id)] = this.#afterChild(ready, exit, session);
      return { result: text, resultOverflow: overflow, turn: false, exit: exit0 };
    }
    // The child is gone: its bytes (and its own fence, if it wrote one) end at the parent's fence,
    // which the sinks still wait for. (Its cgroup pair's figures first: the pair is removed after.)
    const st = stats();
    await this.#afterChild(ready, Promise.resolve(ended!), session);
    for (const f of [fences.result, fences.stdout, fences.stderr]) {
      f.forget(token);
      f.sink = undefined;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const status = ended?.status ?? -1;
    const exitInfo: JailExit = {
      code: status >= 0 && status < 128 ? status : null,
      signal: status >= 128 ? (SIGNALS_BY_NUMBER[status - 128] ?? null) : null,
      timedOut: false,
      oomKilled: st.oomKilled,
      ...peakOf(st),
    };
    if (status < 0) exitInfo.signal = "SIGKILL";
    return { result: text, resultOverflow: overflow, turn: false, exit: exitInfo };
  }

  /** Per pipe set, the end of the last child there being settled (the next one there serves only after it). */
  readonly #settling: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];

  /**
   * Both sets settled: every child before this one gone. A parent with a network serves so: its
   * proxy takes whichever run is attached, and a request the last child left in the proxy's
   * backlog must meet no run's grants, not the next run's.
   */
  #settledAll(): Promise<unknown> {
    return Promise.all(this.#settling);
  }

  /**
   * After a child: its parent's fence through the pipes (every byte of it accounted for), its cgroup
   * pair empty (the keeper reaped it, and with pid 1 of its namespace gone every process in there is
   * gone), else this parent is retired; the pair is then removed.
   */
  async #afterChild(ready: Ready, exit: Promise<Exited>, session: boolean): Promise<void> {
    const ended = await exit;
    const fences = this.#sets[setOf(ready.id)];
    if (ended.token)
      await this.#settle(
        Promise.all([
          fences.result.until(ended.token),
          fences.stdout.until(ended.token),
          fences.stderr.until(ended.token),
        ]),
      );
    if (this.#current === ready) this.#current = undefined;
    const cgroup = ready.cgroup;
    if (cgroup && cgroup.pids().length > 0) this.#retireWhenIdle();
    else if (cgroup && this.alive && !session && cgroup.renew(REUSE_CHARGED_BYTES)) {
      this.#emptyCgroups.push(cgroup);
      return;
    }
    cgroup?.remove().catch(() => undefined);
    if (session) this.retire();
  }

  /** Waits for the fences, but not forever: a parent that never sends them is retired. */
  async #settle(fenced: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), 5000);
    });
    const r = await Promise.race([fenced, late]);
    clearTimeout(timer);
    if (r === "late") this.#retireWhenIdle();
  }

  /** Set when this parent must go but a child on the other set serves a run now: it goes after that run. */
  #retiring = false;

  /**
   * A parent found wrong after a child (a process left, a fence that never came) takes no other
   * run; a run already in it (another tenant's, innocent, on the other pipe set) is answered first,
   * from the moment it asked for its child, not only once it holds it.
   */
  #retireWhenIdle(): void {
    if (this.#inRuns > 0) this.#retiring = true;
    else this.retire();
  }

  #lost(): ChildEnd {
    return {
      result: "",
      resultOverflow: false,
      turn: false,
      exit: { code: null, signal: "SIGKILL", timedOut: false, oomKilled: false },
    };
  }

  async close(): Promise<void> {
    this.#park(false);
    this.retire();
    await this.jail.exited;
  }
}
