// The JavaScript/TypeScript engine: QuickJS compiled to WebAssembly, on the thread that calls it (the host
// thread in in-process mode, or one worker thread of the pool in src/engines/quickjs).
//
// Per run: a pooled cell (QuickJS runtime + service realm, see modules.ts) from a warm WASM module, a
// fresh user context in it, the host globals the code can reach, one deadline over everything. When a
// module is poisoned (an abort, a trap, a host-stack overflow) it is thrown away and the spare module,
// already instantiated in the background, takes over.

import type { Engine, EngineSession } from "../../engine.ts";
import type { ResolvedRequest } from "../../../options/index.ts";
import type { ErrorKind, GuestError, RunResult } from "../../../core/types.ts";
import { ClosedError } from "../../../core/errors.ts";
import { crashed, describeHostError, failedRun, sessionLost } from "../../../kit/failures.ts";
import { EngineLifecycle } from "../../../kit/lifecycle.ts";
import { Serial } from "../../../kit/serial.ts";
import { hasNetBridge, installFetchBridge, type NetworkGate } from "./fetch.ts";
import { scoped, type RunScope } from "../../../kit/scope.ts";
import { Guest } from "./guest.ts";
import type { Cell } from "./cell.ts";
import { ModulePool, type WasmModule } from "./modules.ts";
import { SessionModules } from "./session-modules.ts";
import { captureSession, restoreSession, type Inventory } from "./state.ts";
import { Run, type PreparedSource } from "./run.ts";
import { allGlobals, globalNeeds, isModule, stripTypes, usesAwait } from "./source.ts";
import type { WasmModuleSource } from "../../../core/types.ts";

/** Run endings after which the runtime is known to be in a clean state and may serve the next run. */
const REUSABLE: ReadonlySet<ErrorKind | undefined> = new Set([
  undefined,
  "syntax",
  "runtime",
  "output_limit",
  "denied",
]);

/**
 * JavaScript passes through; TypeScript is type-stripped (positions kept). Only TypeScript waits: the
 * stripper loads on first use, so JavaScript-only hosts never load it and the JS path stays synchronous.
 */
function prepare(
  req: ResolvedRequest,
): PreparedSource | { error: GuestError } | Promise<PreparedSource | { error: GuestError }> {
  if (req.language !== "typescript") return source(req.code, "main.js");
  return stripTypes(req.code).then((stripped) => ("error" in stripped ? stripped : source(stripped.code, "main.ts")));
}

function source(code: string, filename: string): PreparedSource {
  return { code, filename, module: isModule(code), async: usesAwait(code) };
}

export class QuickJSEngine implements Engine {
  readonly name = "quickjs" as const;
  readonly pool: ModulePool;
  /** The module instances sessions run in, one each (never the pool's: stateless runs never meet a session). */
  readonly sessionModules: SessionModules;
  readonly #life = new EngineLifecycle<QuickJSSession>("quickjs engine");

  readonly #gate: NetworkGate | undefined;

  /**
   * `wasmModule`: the compiled QuickJS module to instantiate from (`javascript.wasmModule`). `gate`:
   * how a run granted network gets its gated fetch (quickjs/fetch-gate.ts, Node only); without one, such
   * a run is refused, never run without the network it was promised or with an ungated one.
   */
  constructor(wasmModule?: WasmModuleSource, gate?: NetworkGate) {
    this.pool = new ModulePool(wasmModule);
    this.sessionModules = new SessionModules(wasmModule);
    this.#gate = gate;
  }

  /**
   * The request with the run's network (owned by `scope`), or a refusal when it was granted and this
   * build has no gate.
   */
  #network(req: ResolvedRequest, scope: RunScope): ResolvedRequest | GuestError {
    if (this.#gate) return this.#gate(req, scope);
    if (!req.network) return req;
    return {
      kind: "denied",
      name: "NetworkUnavailable",
      message:
        "network access was granted, but this build of wasmcell (for Workers, browsers and edge runtimes) has " +
        "no network gate; run it on Node.js for fetch, or leave out the network option",
    };
  }

  /** Instantiates the first module (and starts its spare) so the first run does not wait. */
  async warm(): Promise<void> {
    await this.pool.get();
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.#life.run(() => scoped((scope) => this.#run(req, scope)));
  }

  async #run(given: ResolvedRequest, scope: RunScope): Promise<RunResult> {
    const startedAt = performance.now();
    const prepared = prepare(given);
    const src = prepared instanceof Promise ? await prepared : prepared;
    if ("error" in src) return failedRun("quickjs", given, src.error, startedAt);
    const wasm = this.pool.ready() ?? (await this.pool.get());
    const hostNames = Object.keys(given.hostFunctions);
    const req = this.#network(given, scope);
    if ("kind" in req) return failedRun("quickjs", given, req, startedAt);
    const needs = globalNeeds(src.code, hostNames, { network: hasNetBridge(req) });
    const opened = this.#openGuest(wasm, needs, hostNames, needs.runtime.includes("fetch"));
    if ("error" in opened) return failedRun("quickjs", req, opened.error, startedAt);
    const { guest, cell } = opened;
    const run = new Run(guest, req, src);
    const result = await run.execute();
    // What the run holds on the host (its network, its sockets) goes before its cell is handed back.
    scope.close();
    const cleanup = () => {
      run.release();
      if (wasm.alive && !cell.dead) {
        try {
          guest.dispose();
        } catch (error) {
          wasm.poison(`freeing a context failed: ${describeHostError(error)}`);
        }
      }
    };
    wasm.releaseCell(cell, REUSABLE.has(run.failureKind) && wasm.alive, cleanup);
    retireIfGrown(wasm, req);
    return result;
  }

  /** A cell and a fresh user context with the globals installed; a throw here poisons the module. */
  #openGuest(
    wasm: WasmModule,
    needs: ReturnType<typeof globalNeeds>,
    hostNames: string[],
    network: boolean,
  ): { guest: Guest; cell: Cell } | { error: GuestError } {
    let cell: Cell | undefined;
    try {
      cell = wasm.takeCell();
      const guest = new Guest(cell, cell.takeContext());
      // The fetch family's bridge first: it must leave the global object before any family or user code runs.
      if (network) installFetchBridge(guest);
      guest.install(needs, hostNames);
      return { guest, cell };
    } catch (error) {
      wasm.poison(`starting a context failed: ${describeHostError(error)}`);
      if (cell) wasm.releaseCell(cell, false);
      return {
        error: crashed(
          `the QuickJS engine failed to start a context (${describeHostError(error)}); it was replaced, run the code again`,
        ),
      };
    }
  }

  async openSession(): Promise<QuickJSSession> {
    this.#life.admit();
    return this.#adopt(await this.sessionModules.fresh());
  }

  /**
   * A session restored from a snapshot's inventory into a module of its own; `write` puts its memory
   * back. Throws SnapshotRejectedError (and keeps nothing) when it does not restore or prove.
   */
  async restoreSession(
    inventory: Inventory,
    write: (memory: Uint8Array, dirtyPages: readonly number[] | undefined) => void,
  ): Promise<QuickJSSession> {
    this.#life.admit();
    const wasm = await this.sessionModules.forRestore();
    let guest: Guest;
    try {
      guest = restoreSession(wasm, inventory, write);
    } catch (error) {
      this.sessionModules.release(wasm);
      throw error;
    }
    return this.#adopt(guest);
  }

  #adopt(guest: Guest): QuickJSSession {
    let remove: () => void = () => undefined;
    const session = new QuickJSSession(
      guest,
      (req, scope) => this.#network(req, scope),
      () => {
        remove();
        this.sessionModules.release(guest.cell.wasm as WasmModule);
      },
    );
    remove = this.#life.addSession(session);
    return session;
  }

  close(): Promise<void> {
    // Runs in flight finish, but the cells they free are not replaced: nobody will take them.
    this.pool.stopIdleWork();
    this.sessionModules.close();
    return this.#life.close(() => Promise.resolve(this.pool.close()));
  }

  destroy(): Promise<void> {
    return this.#life.destroy(async () => {
      this.sessionModules.close();
      this.pool.destroy();
      await this.#life.drain();
    });
  }
}

/**
 * WASM memory never shrinks: after a run that grew the module far past what runs need (an allocation
 * bomb), the module is retired so its memory goes back to the host once its runs finish.
 */
function retireIfGrown(wasm: WasmModule, req: ResolvedRequest): void {
  if (wasm.alive && wasm.memoryBytes() > Math.max(RETIRE_BYTES, 2 * req.limits.memoryMb * 1024 * 1024 + RETIRE_BYTES))
    wasm.retire();
}
const RETIRE_BYTES = 64 * 1024 * 1024;

/** A session run's network: the request with the run's bridge (owned by the scope), or a refusal. */
type SessionNetwork = (req: ResolvedRequest, scope: RunScope) => ResolvedRequest | GuestError;

/**
 * A user context kept alive across runs, on purpose: globals and declarations survive. Runs are
 * serialised; each has its own limits and deadline. If the module under it is poisoned the session is
 * dead and every later run reports `crashed`.
 */
export class QuickJSSession implements EngineSession {
  readonly #guest: Guest;
  readonly #network: SessionNetwork;
  readonly #onClose: () => void;
  readonly #serial = new Serial();
  #closed = false;

  constructor(guest: Guest, network: SessionNetwork, onClose: () => void) {
    this.#guest = guest;
    this.#network = network;
    this.#onClose = onClose;
  }

  get alive(): boolean {
    return !this.#closed && this.#guest.cell.wasm.alive && !this.#guest.cell.dead;
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.#serial.run(() => scoped((scope) => this.#run(req, scope)));
  }

  async #run(req: ResolvedRequest, scope: RunScope): Promise<RunResult> {
    const startedAt = performance.now();
    if (this.#closed) throw new ClosedError("session");
    if (!this.alive) {
      return failedRun("quickjs", req, sessionLost("its engine crashed in an earlier run"), startedAt);
    }
    const src = await prepare(req);
    if ("error" in src) return failedRun("quickjs", req, src.error, startedAt);
    const net = this.#network(req, scope);
    if ("kind" in net) return failedRun("quickjs", req, net, startedAt);
    try {
      const network = hasNetBridge(net);
      if (network) installFetchBridge(this.#guest);
      this.#guest.install(allGlobals({ network }), Object.keys(req.hostFunctions));
    } catch (error) {
      this.#guest.cell.wasm.poison(`installing globals failed: ${describeHostError(error)}`);
      return failedRun("quickjs", req, sessionLost("its engine crashed while it installed the globals"), startedAt);
    }
    const run = new Run(this.#guest, net, src);
    const result = await run.execute();
    scope.close();
    run.release();
    return result;
  }

  /**
   * Takes the session's state between runs and hands it to `take` at once (the memory view is live:
   * `take` copies what it needs before returning). Throws SnapshotUnsupportedError when it cannot.
   */
  capture<T>(take: (state: ReturnType<typeof captureSession>) => T): Promise<T> {
    // A throw inside the executor rejects the promise (a closed session, a state that cannot be taken).
    return this.#serial.run(
      () =>
        new Promise<T>((resolve) => {
          if (this.#closed) throw new ClosedError("session");
          resolve(take(captureSession(this.#guest)));
        }),
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#serial.idle();
    this.#onClose();
    const { cell } = this.#guest;
    if (cell.wasm.alive && !cell.dead) {
      try {
        this.#guest.dispose();
      } catch (error) {
        cell.wasm.poison(`freeing a session failed: ${describeHostError(error)}`);
      }
    }
    cell.wasm.releaseCell(cell, false);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
