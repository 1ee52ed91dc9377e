// The Pyodide sidecar: a separate Node process that loads Pyodide once and then answers runs over
// stdio (see protocol.ts). It is the inside of the seal, not the seal: the host starts it under
// bubblewrap + seccomp + Node's permission model + a dropped uid, and kills it at the deadline.
//
// Self-contained on purpose: under `--permission` it may read only its own files (this one and
// sidecar-checkpoint.ts), the harness and the Pyodide directory, so it imports nothing but `node:`
// builtins, its checkpoint module and Pyodide (type imports are erased).
//
// What this file adds inside the process, and why:
// - `process.binding` stub: Pyodide's Emscripten NODEFS calls `process.binding("constants")` at load,
//   which the permission model denies; the stub answers that one call and throws for everything else,
//   which also removes `process.binding("spawn_sync")` as an escape hatch when the model is off.
// - Guest stdout/stderr go through Pyodide's write handlers into `out` frames; nothing the guest
//   prints reaches the protocol channel raw. console.* and process.stdout.write go to stderr.
// - Deadline: CPython (Emscripten build) polls `Module.Py_EmscriptenSignalBuffer[0]` every few dozen
//   bytecodes. We install an object whose index-0 getter returns SIGINT once the run's deadline has
//   passed — on this thread, so the cross-thread race that loses ≈3 % of SharedArrayBuffer signals
//   cannot happen — and repeats it every 50 ms while the run has not ended (a guest that swallows
//   KeyboardInterrupt gets another). Code stuck in C (time.sleep, a regex) never polls: the host's
//   SIGKILL is the rung after this one.
// - Memory cap: `WebAssembly.Memory.prototype.grow` refuses to grow past the run's `memoryMb`, so
//   malloc fails inside WASM and Python raises MemoryError instead of the process growing.
// - Guest hardening (last, weakest layer): empty `jsglobals`; `js`, `pyodide_js`, `pyodide`,
//   `_pyodide`, `_pyodide_core` replaced in sys.modules and blocked from import; gc introspection
//   (the easy way to find a leftover JsProxy) refused by an audit hook; and the process runs with
//   `--disallow-code-generation-from-strings`, so a JsProxy that still leaks out cannot turn
//   `.constructor.constructor` into code. (Freezing the intrinsic prototypes was tried and breaks
//   Pyodide's promise conversion, which assigns `constructor` on its own objects.)
// - Stateless runs: after load we take a checkpoint of every piece of mutable state the guest can
//   reach (sidecar-checkpoint.ts has the inventory), and after every run rebuild all of it from the
//   record and prove it with a fingerprint: copying ~30 MB into already-committed memory costs a
//   few ms, a fresh interpreter ~0.3–1 s. Pending timers the run left (background asyncio tasks) are
//   cancelled first. Anything that cannot be rebuilt (a grown function table, a dynamic library, a
//   changed JS built-in, a fingerprint that differs, a fatal error) makes the sidecar retire
//   instead: the host replaces it.

import { closeSync, constants as fsConstants, readFileSync, readSync, writeSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { format } from "node:util";
import type { HostMessage, InitMessage, RunLimits, RunMessage, SidecarFailure, SidecarMessage } from "./protocol.ts";
import {
  fileBytes,
  restoreCheckpoint,
  takeCheckpoint,
  walkFs,
  type EmscriptenFS,
  type EmscriptenFSNode,
  type PyodideModule,
} from "./sidecar-checkpoint.ts";

const started = performance.now();
// Optional arguments (an empty string when absent): the tz database's directory and the package
// library's directory, both mounted read-only.
const [pyodideDir, harnessFile, zoneinfoDir, libraryDir] = process.argv.slice(2);
if (!pyodideDir || !harnessFile) {
  process.stderr.write("usage: sidecar <pyodide dir> <harness.py>\n");
  process.exit(64);
}

// ---- the protocol channel: fd 1, written synchronously; nothing else may write there ----
function send(message: SidecarMessage): void {
  writeAll(Buffer.from(JSON.stringify(message) + "\n", "utf8"));
}
function writeAll(data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(1, data, offset, data.length - offset);
    } catch (error) {
      // EAGAIN on a non-blocking pipe: retry; anything else means the host is gone.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") process.exit(0);
    }
  }
}
const toStderr = (...args: unknown[]): void => {
  process.stderr.write(format(...args) + "\n");
};
console.log = console.info = console.debug = console.warn = console.error = toStderr;
process.stdout.write = (chunk: string | Uint8Array) => process.stderr.write(chunk);

function die(message: string, code = 70): never {
  try {
    send({ t: "fatal", message: message.slice(0, 4000) });
  } finally {
    process.exit(code);
  }
}
process.on("uncaughtException", (error) => die(`uncaught: ${String(error?.stack ?? error)}`));
process.on("unhandledRejection", (error) => die(`unhandled rejection: ${String((error as Error)?.stack ?? error)}`));

const bindingConstants = Object.freeze({ fs: fsConstants, os: osConstants });
Object.defineProperty(process, "binding", {
  value: (name: string) => {
    if (name === "constants") return bindingConstants;
    throw new Error(`process.binding(${JSON.stringify(name)}) is not available in the sidecar`);
  },
  writable: false,
  configurable: false,
});

// ---- the package library (wasmcell setup), mounted read-only at LIBRARY_MOUNT ----
// `import bs4` reads the host's unpacked Debian files without copying 40 MB into the in-memory file
// system (which the checkpoint would copy and compare after every run). Read-only three times over:
// bubblewrap binds the directory read-only (EROFS from the kernel), Node's permission model grants no
// fs write, and here every writing operation of Emscripten's NODEFS fails with EROFS inside WASM, so
// a guest's open(..., "w") is a clean OSError. (This holds for every NODEFS mount in the sidecar:
// the tz database is read-only too.)
const LIBRARY_MOUNT = "/lib/wasmcell-packages";

const EROFS = 69; // Emscripten's errno numbering
const O_ACCMODE = 3;
const O_TRUNC = 512;
const O_CREAT = 64;

type Fn = (...args: unknown[]) => unknown;
interface NodeFsType {
  node_ops: Record<string, Fn>;
  stream_ops: Record<string, Fn>;
}
interface MountFS {
  filesystems: { NODEFS: NodeFsType };
  ErrnoError: new (errno: number) => Error;
  mkdirTree(path: string): void;
  mount(type: NodeFsType, opts: { root: string }, mountpoint: string): unknown;
}

/** Mounts `hostDir` read-only at LIBRARY_MOUNT in Pyodide's file system. */
function mountLibrary(FS: MountFS, hostDir: string): void {
  const NODEFS = FS.filesystems.NODEFS;
  const refuse = () => {
    throw new FS.ErrnoError(EROFS);
  };
  for (const op of ["setattr", "mknod", "rename", "unlink", "rmdir", "symlink"]) NODEFS.node_ops[op] = refuse;
  for (const op of ["setattr", "write", "msync"]) NODEFS.stream_ops[op] = refuse;
  const open = NODEFS.stream_ops.open!;
  NODEFS.stream_ops.open = (stream: unknown) => {
    const flags = (stream as { flags: number }).flags;
    if ((flags & O_ACCMODE) !== 0 || (flags & (O_TRUNC | O_CREAT)) !== 0) refuse();
    return open(stream);
  };
  FS.mkdirTree(LIBRARY_MOUNT);
  FS.mount(NODEFS, { root: hostDir }, LIBRARY_MOUNT);
}

/**
 * Pyodide restores a memory snapshot with one `HEAP8.set` into the memory the module was instantiated
 * with, and never grows it first: a snapshot taken after the library's imports (≈38 MB) is larger than
 * that initial memory, and the restore fails with "offset is out of bounds". While Pyodide loads, the
 * module's memory is grown to the snapshot's size as soon as it exists (before Emscripten makes its
 * views of it). Returns the function that puts `WebAssembly.instantiate` back (before the checkpoint,
 * whose fingerprint of the built-ins must see the original).
 */
function reserveMemoryFor(bytes: number): () => void {
  type Instantiate = (...args: unknown[]) => Promise<unknown>;
  const wasm = (globalThis as unknown as { WebAssembly: { instantiate: Instantiate } }).WebAssembly;
  const real = wasm.instantiate;
  wasm.instantiate = async function instantiate(this: unknown, ...args: unknown[]) {
    const result = (await real.apply(this, args)) as { instance?: { exports: Record<string, unknown> } };
    const exports = result.instance?.exports ?? (result as { exports?: Record<string, unknown> }).exports;
    const memory = exports?.memory as { buffer: ArrayBuffer; grow(pages: number): number } | undefined;
    if (memory && memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / 65536));
    return result;
  };
  return () => {
    wasm.instantiate = real;
  };
}

// ---- timers: track every callback Pyodide's event loop schedules, so a reset can cancel them ----
const pendingTimers = new Set<NodeJS.Timeout | NodeJS.Immediate>();
const realSetTimeout = globalThis.setTimeout;
const realSetImmediate = globalThis.setImmediate;
const realSetInterval = globalThis.setInterval;
globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
  const handle: NodeJS.Timeout = realSetTimeout(() => {
    pendingTimers.delete(handle);
    fn(...args);
  }, ms);
  pendingTimers.add(handle);
  return handle;
}) as typeof setTimeout;
globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
  const handle: NodeJS.Immediate = realSetImmediate(() => {
    pendingTimers.delete(handle);
    fn(...args);
  });
  pendingTimers.add(handle);
  return handle;
}) as typeof setImmediate;
globalThis.setInterval = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
  const handle = realSetInterval(fn, ms, ...args);
  pendingTimers.add(handle);
  return handle;
}) as typeof setInterval;
function cancelPendingTimers(): void {
  for (const handle of pendingTimers) {
    clearTimeout(handle as NodeJS.Timeout);
    clearImmediate(handle as NodeJS.Immediate);
  }
  pendingTimers.clear();
}

// ---- memory cap: refuse WASM memory growth past the run's limit ----
const WASM_PAGE = 65536;
let memoryCapBytes = Number.POSITIVE_INFINITY;
let memoryCapHit = false;
let peakMemoryBytes = 0;
// The TS libs this project uses carry no WebAssembly declarations; this is the little we touch.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(this: WasmMemory, delta: number): number;
}
const WasmMemoryProto = (globalThis as unknown as { WebAssembly: { Memory: { prototype: WasmMemory } } }).WebAssembly
  .Memory.prototype;
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with .call(memory)
const realGrow = WasmMemoryProto.grow;
WasmMemoryProto.grow = function grow(this: WasmMemory, delta: number): number {
  const next = this.buffer.byteLength + delta * WASM_PAGE;
  if (next > memoryCapBytes) {
    memoryCapHit = true;
    throw new RangeError("wasmcell: WASM memory cap reached");
  }
  peakMemoryBytes = Math.max(peakMemoryBytes, next);
  return realGrow.call(this, delta);
};

// ---- deadline: an interrupt "buffer" whose slot 0 turns into SIGINT when the deadline passes ----
const SIGINT = 2;
const RESEND_MS = 50;
const deadline = { at: Number.POSITIVE_INFINITY, lastSent: Number.NEGATIVE_INFINITY, fired: false };
const interruptSource: Record<number, number> = Object.create(null) as Record<number, number>;
Object.defineProperty(interruptSource, 0, {
  get() {
    const now = performance.now();
    if (now < deadline.at || now - deadline.lastSent < RESEND_MS) return 0;
    deadline.lastSent = now;
    deadline.fired = true;
    return SIGINT;
  },
  set() {
    // CPython writes 0 back after reading; the getter is the only source of truth.
  },
});

// ---- stdin: init line, snapshot bytes, then JSON lines ----
// Chunks are kept in a list and joined once per need: the 30 MB snapshot arrives in ~64 KiB chunks,
// and concatenating on every chunk would copy gigabytes.
let chunks: Buffer[] = [];
let buffered = 0;
let init: InitMessage | undefined;
let snapshot: Uint8Array | undefined;
let snapshotReceived = false;
let initDelivered = false;
const queue: HostMessage[] = [];
let wake: (() => void) | undefined;

function joined(): Buffer {
  if (chunks.length > 1) chunks = [Buffer.concat(chunks)];
  return chunks[0] ?? Buffer.alloc(0);
}
function consume(n: number): void {
  const all = joined();
  // Copy the rest: a view would keep the whole (snapshot-sized) buffer alive.
  chunks = n < all.length ? [Buffer.from(all.subarray(n))] : [];
  buffered -= n;
}

/** The snapshot from the descriptor the host passed (it opened and verified the file), then closed. */
function readSnapshotFd(fd: number, bytes: number): Uint8Array {
  // A fresh buffer: Pyodide reads the snapshot through a Uint32Array, so it must start 4-byte aligned.
  const out = new Uint8Array(bytes);
  for (let offset = 0; offset < bytes;) {
    const n = readSync(fd, out, offset, bytes - offset, offset);
    if (n === 0) die(`the snapshot descriptor ended after ${offset} of ${bytes} bytes`);
    offset += n;
  }
  closeSync(fd);
  return out;
}

function pump(): void {
  for (;;) {
    if (init && !snapshotReceived && init.snapshotFd !== undefined) {
      snapshot = readSnapshotFd(init.snapshotFd, init.snapshotBytes);
      snapshotReceived = true;
      continue;
    }
    if (init && !snapshotReceived) {
      if (buffered < init.snapshotBytes) return;
      // A copy: Pyodide reads the snapshot through a Uint32Array, so it must start 4-byte aligned.
      snapshot = new Uint8Array(joined().subarray(0, init.snapshotBytes));
      consume(init.snapshotBytes);
      snapshotReceived = true;
      continue;
    }
    if (buffered === 0) return;
    const all = joined();
    const newline = all.indexOf(10);
    if (newline < 0) return;
    const line = all.subarray(0, newline).toString("utf8");
    consume(newline + 1);
    if (!init) {
      init = JSON.parse(line) as InitMessage;
      continue;
    }
    queue.push(JSON.parse(line) as HostMessage);
  }
}
process.stdin.on("data", (chunk: Buffer) => {
  chunks.push(chunk);
  buffered += chunk.length;
  // While the snapshot streams in, only look once it is all here.
  if (init && !snapshotReceived && init.snapshotFd === undefined && buffered < init.snapshotBytes) return;
  pump();
  wake?.();
});
process.stdin.on("end", () => process.exit(0));

// ---- network: guest Python's one way out, a synchronous request to the host's gated fetch ----
// The sidecar has no network of its own. A request goes up the protocol channel as a `fetch` frame;
// the host applies the policy and answers with a `net` frame, read here synchronously from stdin
// (the event loop is not running while Python waits, so no other reader takes it). The function
// Python holds is an arrow function with a null prototype that takes and returns a string: nothing
// reachable from it leads to the JS realm (no constructor, no prototype, no methods).
let netSerial = 0;
const netSleep = new Int32Array(new SharedArrayBuffer(4));
const netBuffer = Buffer.alloc(1 << 16);
function hostFetch(request: unknown): string {
  if (typeof request !== "string") return JSON.stringify({ ok: false, error: "network: bad request" });
  const seq = ++netSerial;
  send({ t: "fetch", id: output.id, seq, request });
  for (let lineEnded = true; ;) {
    // Parse only when a frame may have ended (joining the chunks on every read would be quadratic).
    if (lineEnded) pump();
    const at = queue.findIndex((m) => m.t === "net" && m.seq === seq);
    if (at >= 0) {
      const [reply] = queue.splice(at, 1);
      return reply?.t === "net" ? reply.reply : "{}";
    }
    let n: number;
    try {
      n = readSync(0, netBuffer, 0, netBuffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") process.exit(0);
      Atomics.wait(netSleep, 0, 0, 1);
      continue;
    }
    if (n === 0) process.exit(0);
    lineEnded = netBuffer.subarray(0, n).includes(10);
    chunks.push(Buffer.from(netBuffer.subarray(0, n)));
    buffered += n;
  }
}
const hostFetchForPython = (request: unknown): string => hostFetch(request);
Object.setPrototypeOf(hostFetchForPython, null);

function nextMessage(): Promise<HostMessage | "init"> {
  return new Promise((resolve) => {
    const check = () => {
      if (init && snapshotReceived && !initDelivered) {
        initDelivered = true;
        return resolve("init");
      }
      const message = queue.shift();
      if (message) return resolve(message);
      wake = () => {
        wake = undefined;
        check();
      };
    };
    check();
  });
}

// ---- Pyodide ----
interface PyProxyFn {
  (...args: unknown[]): unknown;
  destroy(): void;
}
interface PyodideAPI {
  _module: PyodideModule;
  runPython(code: string): unknown;
  setStdout(options: { write(buffer: Uint8Array): number }): void;
  setStderr(options: { write(buffer: Uint8Array): number }): void;
  setInterruptBuffer(buffer: unknown): void;
  globals: { get(name: string): PyProxyFn | undefined };
  makeMemorySnapshot(): Uint8Array;
}

const WORKDIR = "/home/pyodide";
/** How long a new sidecar waits idle before its one collection of the load-time garbage. */
const IDLE_GC_MS = 300;
const HARNESS_MODULE = "wasmcell_harness";

// HTTP for guest Python, through the host. http.client's connections (and so urllib.request, which
// builds on them) never open a socket: a request is handed to _wasmcell_net_call, a synchronous call
// into the host's gated fetch (hostFetch below), and the reply — plain bytes, never a JS object — is
// parsed by http.client's own HTTPResponse. Redirects are not followed by the host here (urllib's
// handler follows them, each hop a new, checked request). Direct sockets fail at once: the sidecar
// has no network of its own, and Emscripten's socket emulation would otherwise hang to the deadline.
const NET_PY = String.raw`
import http.client as _hc, urllib.request as _ur, io as _io, base64 as _b64, socket as _socket, errno as _errno

_wasmcell_host_fetch = [None]
def _wasmcell_net_connect(fn):
    _wasmcell_host_fetch[0] = fn

def _wasmcell_no_socket(*args, **kwargs):
    raise OSError(_errno.ENETUNREACH, "direct sockets are not available in the sandbox; use urllib.request or http.client, which go through the host's allowlist")
_socket.socket.connect = _wasmcell_no_socket
_socket.socket.connect_ex = _wasmcell_no_socket
_socket.create_connection = _wasmcell_no_socket

class _WasmcellReply:
    def __init__(self, raw):
        self._raw = raw
    def makefile(self, *args, **kwargs):
        return _io.BytesIO(self._raw)
    def close(self):
        pass

def _wasmcell_net_call(method, url, headers, body):
    fn = _wasmcell_host_fetch[0]
    if fn is None:
        raise OSError(_errno.ENETUNREACH, "network: the sandbox has no network")
    if body is not None and not isinstance(body, (bytes, bytearray)):
        body = body.encode("utf-8") if isinstance(body, str) else b"".join(body)
    request = json.dumps({"url": url, "method": method, "headers": [[str(k), str(v)] for k, v in headers],
                          "body": _b64.b64encode(body).decode("ascii") if body else None})
    reply = json.loads(str(fn(request)))
    if not reply.get("ok"):
        message = str(reply.get("error", "network: the request failed"))
        if reply.get("denied"):
            raise PermissionError(_errno.EACCES, message)
        if reply.get("timeout"):
            raise TimeoutError(_errno.ETIMEDOUT, message)
        raise OSError(_errno.ECONNREFUSED, message)
    return reply

class _WasmcellHTTPConnection(_hc.HTTPConnection):
    """An http.client connection whose requests go through the host's gated fetch."""
    _wasmcell_scheme = "http"
    def connect(self):
        pass
    def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
        self._wasmcell = [method, url, [], b""]
    def putheader(self, header, *values):
        header = header.decode("latin-1") if isinstance(header, bytes) else str(header)
        value = ", ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values)
        self._wasmcell[2].append((header, value))
    def endheaders(self, message_body=None, *, encode_chunked=False):
        if message_body is not None:
            self.send(message_body)
    def send(self, data):
        if hasattr(data, "read"):
            data = data.read()
        if isinstance(data, str):
            data = data.encode("iso-8859-1")
        if not isinstance(data, (bytes, bytearray)):
            data = b"".join(data)
        self._wasmcell[3] += bytes(data)
    def request(self, method, url, body=None, headers={}, *, encode_chunked=False):
        # urllib turns an OSError from request() (not from getresponse()) into URLError: call here.
        super().request(method, url, body, headers, encode_chunked=encode_chunked)
        self._wasmcell_response = self._wasmcell_fetch()
    def getresponse(self):
        response = getattr(self, "_wasmcell_response", None)
        self._wasmcell_response = None
        return response or self._wasmcell_fetch()
    def _wasmcell_fetch(self):
        method, target, headers, body = self._wasmcell
        if not target.startswith("/"):
            url = target
        else:
            host = self.host if ":" not in self.host else "[%s]" % self.host
            url = "%s://%s:%d%s" % (self._wasmcell_scheme, host, self.port, target)
        reply = _wasmcell_net_call(method, url, headers, body or None)
        content = _b64.b64decode(reply["body"])
        lines = ["HTTP/1.1 %d %s" % (reply["status"], reply["statusText"] or "-")]
        for name, value in reply["headers"]:
            if name not in ("content-length", "transfer-encoding", "connection"):
                lines.append("%s: %s" % (name, value))
        lines.append("content-length: %d" % len(content))
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + content
        response = _hc.HTTPResponse(_WasmcellReply(raw), method=method, url=url)
        response.begin()
        return response
    def close(self):
        pass

class _WasmcellHTTPSConnection(_WasmcellHTTPConnection):
    default_port = 443
    _wasmcell_scheme = "https"
    def __init__(self, host, port=None, *args, context=None, **kwargs):
        super().__init__(host, port, *args, **kwargs)

_hc.HTTPConnection = _WasmcellHTTPConnection
_hc.HTTPSConnection = _WasmcellHTTPSConnection
_ur.HTTPHandler.http_open = lambda self, req: self.do_open(_WasmcellHTTPConnection, req)
class _WasmcellHTTPSHandler(_ur.AbstractHTTPHandler):
    def https_open(self, req):
        return self.do_open(_WasmcellHTTPSConnection, req)
    https_request = _ur.AbstractHTTPHandler.do_request_
_ur.HTTPSHandler = _WasmcellHTTPSHandler
_ur.install_opener(_ur.build_opener(_WasmcellHTTPSHandler))
del _WasmcellHTTPSHandler
`;

// Python run once per interpreter, before the checkpoint (and before the snapshot is taken, so a
// sidecar started from the snapshot skips it): imports, the guest-visible refusals, the entry point.
const SETUP_PY = String.raw`
import sys, os, asyncio, json, ast, linecache, traceback, types, inspect, random
import ${HARNESS_MODULE} as _h


os.chdir(${JSON.stringify(WORKDIR)})

# Emscripten's libc system() calls Node's child_process.spawnSync(cmd, {shell: true}) when it runs
# in Node: a path from Python to a host shell that needs no JS bridge. The seal stops it (permission
# model, seccomp, no shell in the jail); this makes the Python-level answer a clean error. (ctypes can
# still call the C function; then the sidecar's JS error is reported as kind "denied" and it retires.)
def _wasmcell_no_system(*args, **kwargs):
    raise PermissionError(1, "starting processes is not available in the sandbox")
os.system = _wasmcell_no_system
os.popen = _wasmcell_no_system

# Pyodide's event loop is always running here, and blocking on it (its asyncio.run) needs a stack
# switch our entry point cannot offer: say what works instead of Pyodide's internal message.
_pyodide_asyncio_run = asyncio.run
def _wasmcell_asyncio_run(main, *, debug=None, loop_factory=None):
    if asyncio.events._get_running_loop() is not None and loop_factory is None:
        if inspect.iscoroutine(main):
            main.close()
        raise RuntimeError("asyncio.run() cannot block inside the sandbox's running event loop; use top-level 'await main()' instead")
    return _pyodide_asyncio_run(main, debug=debug, loop_factory=loop_factory)
asyncio.run = _wasmcell_asyncio_run

def _wasmcell_start(code, max_result_bytes, fresh):
    # Every run starts from the checkpoint, which holds one random state: reseed so runs differ.
    random.seed()
    prepared = _h._prepare(code)
    if isinstance(prepared, dict):
        return _h.encode_envelope(prepared)
    body, last = prepared
    ns = _h.new_namespace() if fresh else _wasmcell_session_ns
    if _h._is_coroutine_code(body) or _h._is_coroutine_code(last):
        async def _go():
            return _h.encode_envelope(await _h.run_async_envelope(code, ns, max_result_bytes))
        return _go()
    return _h.encode_envelope(_h.run_envelope(code, ns, max_result_bytes))

_wasmcell_session_ns = _h.new_namespace()
${NET_PY}
`;

// The guest-level blocks on the JavaScript bridge. Run after every load: Pyodide's own start-up from a
// snapshot imports _pyodide_core and friends, so these cannot be in the snapshot.
const HARDEN_PY = String.raw`
import sys, types
_BLOCKED_ROOTS = frozenset({"js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "micropip"})

class _WasmcellBlockedFinder:
    """Refuses imports of the modules that bridge to the JavaScript realm."""
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".", 1)[0] in _BLOCKED_ROOTS:
            raise ModuleNotFoundError("No module named %r (the sandbox has no JavaScript bridge)" % name, name=name)
        return None

# None in sys.modules makes "import x" raise ModuleNotFoundError even for modules already loaded;
# the objects Pyodide's own code holds (the event loop's scheduler) keep working. Pyodide's asyncio
# glue (asyncio.run, run_until_complete) imports "pyodide_js._api.config" lazily for one flag: it
# gets a pure-Python stand-in holding that flag and no JavaScript object.
import pyodide_js as _pjs
_config = types.SimpleNamespace(enableRunUntilComplete=bool(_pjs._api.config.enableRunUntilComplete))
del _pjs
for _name in list(sys.modules):
    if _name.split(".", 1)[0] in _BLOCKED_ROOTS:
        sys.modules[_name] = None
_api_stub = types.ModuleType("pyodide_js._api", "wasmcell stand-in: configuration flags only")
_api_stub.config = _config
_js_stub = types.ModuleType("pyodide_js", "wasmcell stand-in: no JavaScript objects")
_js_stub._api = _api_stub
sys.modules["pyodide_js"] = _js_stub
sys.modules["pyodide_js._api"] = _api_stub
del _api_stub, _js_stub, _config
sys.meta_path.insert(0, _WasmcellBlockedFinder)

_REFUSED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
def _wasmcell_audit(event, args):
    if event in _REFUSED_EVENTS:
        raise RuntimeError("%s is not available in the sandbox" % event)
sys.addaudithook(_wasmcell_audit)
del _name
`;

/**
 * Node's web globals that nothing in the sidecar uses, removed before the checkpoint. Node installs
 * them as lazy properties: reading one's descriptor (which the checkpoint's fingerprint of the JS
 * realm does for every global) loads its implementation (undici for `FormData` & co., web streams),
 * which cost 0.2–0.6 s of every sidecar start and ~10 MB per process. Deleting does not load them.
 * Pyodide uses `fetch` only to load files by URL and `WebSocket` only for Emscripten's socket
 * emulation; the sidecar has no network of its own, so both would fail anyway.
 */
const UNUSED_WEB_GLOBALS = [
  "fetch",
  "FormData",
  "Headers",
  "Request",
  "Response",
  "WebSocket",
  "EventSource",
  "MessageEvent",
  "CloseEvent",
  "ErrorEvent",
  "ReadableStream",
  "ReadableStreamDefaultReader",
  "ReadableStreamBYOBReader",
  "ReadableStreamBYOBRequest",
  "ReadableByteStreamController",
  "ReadableStreamDefaultController",
  "TransformStream",
  "TransformStreamDefaultController",
  "WritableStream",
  "WritableStreamDefaultController",
  "WritableStreamDefaultWriter",
  "ByteLengthQueuingStrategy",
  "CountQueuingStrategy",
  "TextEncoderStream",
  "TextDecoderStream",
  "CompressionStream",
  "DecompressionStream",
  "Storage",
  "localStorage",
  "sessionStorage",
];
function dropUnusedWebGlobals(): void {
  for (const name of UNUSED_WEB_GLOBALS) Reflect.deleteProperty(globalThis, name);
}

async function loadPyodideRuntime(fromSnapshot: Uint8Array | undefined, makeSnapshot: boolean): Promise<PyodideAPI> {
  const mod = (await import(`${pyodideDir}/pyodide.mjs`)) as { loadPyodide(options: object): Promise<PyodideAPI> };
  const options: Record<string, unknown> = {
    indexURL: pyodideDir!.endsWith("/") ? pyodideDir : `${pyodideDir}/`,
    // An empty, prototype-less object: `import js` (if it were reachable) holds nothing, and has no
    // `.constructor` leading to the realm's Function.
    jsglobals: Object.create(null) as object,
    env: { HOME: WORKDIR },
    fullStdLib: false,
    checkAPIVersion: true,
  };
  if (makeSnapshot) options._makeSnapshot = true;
  if (fromSnapshot && fromSnapshot.length > 0) options._loadSnapshot = fromSnapshot;
  return mod.loadPyodide(options);
}

function placeInputFiles(FS: EmscriptenFS, files: Record<string, string>): void {
  for (const [path, b64] of Object.entries(files)) {
    const full = `${WORKDIR}/${path}`;
    const dir = full.slice(0, full.lastIndexOf("/"));
    FS.mkdirTree(dir);
    FS.writeFile(full, Buffer.from(b64, "base64"));
  }
}

/** Files under WORKDIR that are new or changed compared to the inputs. */
function collectOutputFiles(
  FS: EmscriptenFS,
  inputs: Record<string, string>,
  limits: RunLimits,
): { files: { path: string; data: string }[]; over?: string } {
  const nodes = new Map<string, EmscriptenFSNode>();
  let root: EmscriptenFSNode;
  try {
    root = FS.lookupPath(WORKDIR).node;
  } catch {
    return { files: [] };
  }
  walkFs(FS, root, WORKDIR, nodes);
  const files: { path: string; data: string }[] = [];
  let total = 0;
  for (const [full, node] of nodes) {
    if (!FS.isFile(node.mode)) continue;
    const bytes = fileBytes(node);
    if (!bytes) continue;
    const rel = full.slice(WORKDIR.length + 1);
    const input = inputs[rel];
    if (input !== undefined && Buffer.compare(Buffer.from(input, "base64"), bytes) === 0) continue;
    total += bytes.length;
    if (files.length + 1 > limits.maxFiles) {
      return { files: [], over: `the run wrote more than ${limits.maxFiles} files (limits.maxFiles)` };
    }
    if (total > limits.maxFileBytes) {
      return { files: [], over: `the run wrote more than ${limits.maxFileBytes} bytes of files (limits.maxFileBytes)` };
    }
    files.push({ path: rel, data: Buffer.from(bytes).toString("base64") });
  }
  return { files };
}

// Output capture: decoded per stream, capped across both, forwarded as frames while the run goes.
const output = {
  id: 0,
  limit: 0,
  /** From the run message: the host's one wording (src/engines/output.ts). */
  marker: "",
  forwarded: 0,
  attempted: 0,
  truncated: false,
  decoders: { stdout: new TextDecoder("utf-8"), stderr: new TextDecoder("utf-8") },
};
function writer(stream: "stdout" | "stderr") {
  return {
    write(buffer: Uint8Array): number {
      output.attempted += buffer.length;
      if (output.truncated) return buffer.length;
      let chunk = buffer;
      const room = output.limit - output.forwarded;
      if (chunk.length > room) chunk = chunk.subarray(0, Math.max(0, room));
      output.forwarded += chunk.length;
      let text = output.decoders[stream].decode(chunk, { stream: chunk.length === buffer.length });
      if (chunk.length < buffer.length) {
        output.truncated = true;
        text += output.marker;
      }
      if (text) send({ t: "out", id: output.id, stream, text });
      return buffer.length;
    },
  };
}

function makeFailure(kind: SidecarFailure["kind"], name: string, message: string): SidecarFailure {
  return { kind, name, message };
}

async function main(): Promise<void> {
  const first = await nextMessage();
  if (first !== "init" || !init) die("expected init");
  const receivedAt = performance.now() - started;
  const mode = init.mode;
  const loadStart = performance.now();
  const restoreInstantiate = snapshot?.length ? reserveMemoryFor(snapshot.length) : () => {};
  const py = await loadPyodideRuntime(snapshot, mode === "snapshot");
  restoreInstantiate();
  snapshot = undefined;
  // Pyodide keeps its load options; drop its reference to the 30 MB snapshot so it can be collected.
  const config = (py as unknown as { _api?: { config?: Record<string, unknown> } })._api?.config;
  if (config) delete config._loadSnapshot;
  const loadMs = performance.now() - loadStart;
  const M = py._module;
  const FS = M.FS;

  if (!init.snapshotBytes) {
    FS.mkdirTree(`/lib/python3.14/site-packages`);
    FS.writeFile(`/lib/python3.14/site-packages/${HARNESS_MODULE}.py`, readFileSync(harnessFile!));
  }
  if (libraryDir) mountLibrary(FS as unknown as MountFS, libraryDir);
  // The library goes after the standard library on sys.path (it cannot shadow it), and what the init
  // message names is imported before the snapshot is taken: runs that use it find it loaded. Only
  // module names the host validated reach here; importing them runs library code, never guest code.
  if (mode === "snapshot" || !init.snapshotBytes) {
    py.runPython(
      `import sys, importlib\n` +
        (libraryDir ? `sys.path.append(${JSON.stringify(LIBRARY_MOUNT)})\n` : "") +
        (mode === "snapshot" ? `for _m in ${JSON.stringify(init.preload ?? [])}: importlib.import_module(_m)\n` : ""),
    );
  }
  if (mode === "snapshot") {
    // The setup (imports, hardening, entry point) is pure Python state, so it goes into the snapshot
    // and a sidecar started from it skips that work (~0.1 s). It never ran guest code.
    py.runPython(SETUP_PY);
    const bytes = py.makeMemorySnapshot();
    send({ t: "snapshot", bytes: bytes.length });
    writeAll(bytes);
    process.exit(0);
  }
  if (zoneinfoDir) {
    // The host's tz database, read-only (the jail's bind and Node's read-only permission model both
    // refuse writes), at the path on Python's default TZPATH: zoneinfo works without a tzdata package.
    FS.mkdirTree("/usr/share/zoneinfo");
    FS.mount(FS.filesystems.NODEFS, { root: zoneinfoDir }, "/usr/share/zoneinfo");
  }
  const setupStart = performance.now();
  py.setStdout(writer("stdout"));
  py.setStderr(writer("stderr"));
  py.setInterruptBuffer(interruptSource);
  // From a snapshot the setup already ran; only the file system's cwd (JS-side state) is not in it.
  // From a snapshot the setup already ran; the cwd is JS-side file-system state, not in the snapshot.
  py.runPython(init.snapshotBytes ? `import os\nos.chdir(${JSON.stringify(WORKDIR)})` : SETUP_PY);
  py.runPython(HARDEN_PY);
  const connectNet = py.globals.get("_wasmcell_net_connect");
  if (!connectNet) die("setup did not define _wasmcell_net_connect");
  connectNet(hostFetchForPython);
  connectNet.destroy();
  const start = py.globals.get("_wasmcell_start");
  if (!start) die("setup did not define _wasmcell_start");
  const stateful = init.stateful;
  if (!stateful) {
    // Proxies created during a run would be decref'd by the FinalizationRegistry *after* the reset,
    // on memory that no longer holds them. The reset frees everything a run made, so nothing leaks.
    M.finalizationRegistry = { register() {}, unregister() {} };
  }
  const checkpointStart = performance.now();
  dropUnusedWebGlobals();
  const checkpoint = stateful ? undefined : takeCheckpoint(M);
  // The snapshot (30 MB) and load-time garbage are unreachable now; an idle process would keep them
  // mapped until some later allocation triggers a collection, so collect once — off the first run's
  // path: when the sidecar has been idle a moment, or after the first run's reset (before it says
  // it is free again), whichever comes first. (The `gc` global cannot be deleted; code that reaches
  // it can only spend its own CPU, which the deadline bounds.)
  const gc = (globalThis as { gc?: () => void }).gc;
  let gcPending = typeof gc === "function";
  let running = false;
  const collectOnce = () => {
    if (!gcPending || running) return;
    gcPending = false;
    gc?.();
  };
  realSetTimeout(collectOnce, IDLE_GC_MS);
  send({
    t: "ready",
    startMs: performance.now() - started,
    loadMs,
    phases: {
      received: receivedAt,
      setup: checkpointStart - setupStart,
      checkpoint: performance.now() - checkpointStart,
    },
    fromSnapshot: init.snapshotBytes > 0,
  });

  for (;;) {
    const message = await nextMessage();
    if (message === "init" || message.t !== "run") continue;
    running = true;
    await runOne(py, start, message, stateful);
    running = false;
    if (checkpoint) {
      const t0 = performance.now();
      cancelPendingTimers();
      const problem = restoreCheckpoint(M, checkpoint);
      const ms = performance.now() - t0;
      if (!problem) collectOnce();
      send({ t: "reset", id: message.id, ms, ...(problem ? { retire: problem } : {}) });
      if (problem) process.exit(0);
    }
  }
}

async function runOne(py: PyodideAPI, start: PyProxyFn, message: RunMessage, stateful: boolean): Promise<void> {
  const { limits } = message;
  const M = py._module;
  output.id = message.id;
  output.limit = limits.maxOutputBytes;
  output.marker = message.truncationMarker;
  output.forwarded = 0;
  output.attempted = 0;
  output.truncated = false;
  memoryCapHit = false;
  peakMemoryBytes = M.HEAPU8.length;
  // The cap, and how this process sees it fire. Normally the grow hook: every allocation past the
  // memory already there asks to grow it, and the hook refuses past the cap (and records it).
  // malloc's own footprint limit would refuse first and silently, so it is off then (MAX_SIZE_T).
  // When an earlier run grew the memory past this run's cap (WASM memory cannot shrink), the grow
  // hook cannot hold it and the footprint limit does (dlmalloc state, in linear memory: the reset
  // restores it). Its only trace is malloc's peak footprint: a run that grew to within a MiB of the
  // limit hit it. One request larger than what is left is refused without that trace and is then a
  // runtime MemoryError: the guest's word alone never makes a `memory` kind.
  const capBytes = limits.memoryMb * 1024 * 1024;
  const footprintBinding = capBytes < M.HEAPU8.length;
  const footprintLimit = Math.min(capBytes, 0xffff0000);
  M._malloc_set_footprint_limit(footprintBinding ? footprintLimit : 0xffffffff);
  memoryCapBytes = Math.max(capBytes, M.HEAPU8.length);
  let envelope: string | undefined;
  let failure: SidecarFailure | undefined;
  let fatal: string | undefined;
  try {
    placeInputFiles(M.FS, message.files);
    deadline.fired = false;
    deadline.lastSent = Number.NEGATIVE_INFINITY;
    deadline.at = performance.now() + limits.timeoutMs;
    let value = start(message.code, limits.maxResultBytes, !stateful);
    if (typeof value !== "string") value = await value;
    if (typeof value === "string") envelope = value;
    else failure = makeFailure("crashed", "InternalError", "the harness returned no envelope");
  } catch (error) {
    // A PythonError escaping the harness (KeyboardInterrupt while building the envelope, a guest that
    // replaced the harness's encoder), or a JavaScript error from inside WASM (a trap, a stack
    // overflow): the interpreter may be broken. A PythonError's message and type are the guest's
    // words, so they decide nothing alone: the kind comes from what this process saw (its interrupt
    // fired, its memory cap refused a growth) or from the class of a JavaScript error.
    const text = String((error as Error)?.message ?? error);
    const pythonType =
      (error as Error)?.name === "PythonError" ? String((error as { type?: unknown }).type) : undefined;
    const code = (error as NodeJS.ErrnoException)?.code ?? ((error as Error)?.cause as NodeJS.ErrnoException)?.code;
    if (deadline.fired && (pythonType === undefined || pythonType === "KeyboardInterrupt"))
      failure = makeFailure("timeout", "KeyboardInterrupt", "the run was stopped at its deadline (limits.timeoutMs)");
    else if (memoryCapHit && (pythonType === undefined || pythonType === "MemoryError"))
      failure = makeFailure("memory", "MemoryError", "out of memory (limits.memoryMb)");
    else if (pythonType !== undefined)
      failure = makeFailure("crashed", "InternalError", `the harness failed: ${pythonType.slice(0, 200)}`);
    else if (error instanceof RangeError && /Maximum call stack/.test(text))
      failure = makeFailure("stack", "RangeError", "the call stack overflowed");
    else if (code === "ERR_ACCESS_DENIED" || /ERR_ACCESS_DENIED|Access to this API has been restricted/.test(text)) {
      failure = makeFailure("denied", "PermissionError", `the sandbox denied an operation: ${text.slice(0, 300)}`);
    } else failure = makeFailure("crashed", "InternalError", `the interpreter failed: ${text.slice(0, 500)}`);
    fatal = text;
  } finally {
    deadline.at = Number.POSITIVE_INFINITY;
    if (footprintBinding && M._malloc_max_footprint() >= footprintLimit - (1 << 20)) memoryCapHit = true;
  }
  for (const stream of ["stdout", "stderr"] as const) {
    const rest = output.decoders[stream].decode();
    if (rest && !output.truncated) send({ t: "out", id: message.id, stream, text: rest });
  }
  let collected: { files: { path: string; data: string }[]; over?: string };
  try {
    collected = collectOutputFiles(M.FS, message.files, limits);
  } catch (error) {
    collected = { files: [], over: `the output files could not be read: ${String(error)}` };
  }
  send({
    t: "result",
    id: message.id,
    ...(failure ? { failure } : { envelope: envelope ?? "" }),
    files: collected.files,
    ...(collected.over ? { filesOverLimit: collected.over } : {}),
    outputBytes: output.attempted,
    outputTruncated: output.truncated,
    peakMemoryBytes,
    interrupted: deadline.fired,
    memoryCapHit,
  });
  if (fatal !== undefined) {
    // Never reuse an interpreter that threw through WASM: exit, the host starts a fresh one.
    send({ t: "reset", id: message.id, ms: 0, retire: `interpreter error: ${fatal.slice(0, 300)}` });
    process.exit(0);
  }
}

main().catch((error: unknown) => die(`sidecar failed: ${String((error as Error)?.stack ?? error)}`));
