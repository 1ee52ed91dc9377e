// Threat: guest Python goes around the host's allowlist with raw sockets — `_socket` directly, the C
// type's methods under a patched Python class, a restored `socket` module, UDP, DNS, libc through
// ctypes — to reach a host service, or to hold the run (and its sidecar) until the deadline inside
// Emscripten's socket emulation. Every path must fail at once with an OSError that points to the
// allowlisted clients, with the network granted (even for an address the allowlist names) and
// without; the listener must see nothing. (The native tier's raw sockets: network-access.test.ts.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { startListener } from "../helpers/host.ts";
import { FULL } from "../helpers/pyodide.ts";

const OUTCOME = `
def outcome(fn):
    try:
        fn()
        return "ALLOWED"
    except OSError as e:
        return "%s: %s" % (type(e).__name__, e.strerror or e)
`;

/** Each probe is its own run, so one that hangs shows up as that probe's timeout. */
const probes = (port: number): Record<string, string> => {
  const addr = `("127.0.0.1", ${port})`;
  return {
    "_socket.socket().connect": `import _socket\ns = _socket.socket()\ns.connect(${addr})`,
    "the C base class's connect": `import socket\ns = socket.socket()\nsocket.socket.__mro__[1].connect(s, ${addr})`,
    "_socket.socket.connect_ex": `import _socket\nr = _socket.socket().connect_ex(${addr})\nraise OSError(r, "connect_ex returned %d" % r)`,
    "a reloaded socket module": `import importlib, socket\nimportlib.reload(socket)\nsocket.create_connection(${addr}, timeout=2)`,
    "UDP sendto": `import _socket\n_socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM).sendto(b"x", ${addr})`,
    "the sandbox's own names rebound": `import __main__, _socket\nfor k in list(vars(__main__)):\n    if "wasmcell" in k.lower() or k.isupper():\n        setattr(__main__, k, None)\n_socket.socket().connect(${addr})`,
    "the refusal's frames rewritten": `
import _socket
try:
    _socket.socket()
except OSError as e:
    tb = e.__traceback__
while tb is not None:
    names = [] if tb.tb_frame.f_code.co_name in ("attempt", "outcome") else list(tb.tb_frame.f_locals)
    for k in names:
        try:
            tb.tb_frame.f_locals[k] = frozenset()
        except Exception:
            pass
    tb = tb.tb_next
_socket.socket().connect(${addr})`,
    getaddrinfo: `import socket\nsocket.getaddrinfo("localhost", ${port})`,
    gethostbyname: `import _socket\n_socket.gethostbyname("localhost")`,
    socketpair: `import socket\nsocket.socketpair()`,
    "libc socket() through ctypes": `
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.socket(2, 1, 0)
if fd < 0:
    raise OSError(ctypes.get_errno(), "libc socket() refused")
sa = struct.pack("<H", 2) + struct.pack(">H", ${port}) + bytes([127, 0, 0, 1]) + bytes(8)
raise OSError(0, "libc connect() returned %d" % libc.connect(fd, sa, 16))`,
  };
};

const MESSAGE = "not available in the sandbox";

describe("raw sockets on Pyodide", () => {
  let listener: Awaited<ReturnType<typeof startListener>>;
  let granted: Sandbox;
  let none: Sandbox;
  before(async () => {
    listener = await startListener();
    // The allowlist names the listener: only the host's gated fetch may reach it, never a socket.
    granted = await createSandbox({
      python: { pool: 1 },
      seal: FULL,
      network: { allow: [`127.0.0.1:${listener.port}`] },
    });
    none = await createSandbox({ python: { pool: 1 }, seal: FULL });
  });
  after(async () => {
    await granted.close();
    await none.close();
    await listener.close();
  });

  for (const [label, sandbox] of [
    ["with the network granted", () => granted],
    ["without network", () => none],
  ] as const) {
    it(`every raw path fails at once with a clear OSError, ${label}`, async () => {
      const out: Record<string, string> = {};
      for (const [name, code] of Object.entries(probes(listener.port))) {
        // A hang would end the run at this deadline: kind "timeout" instead of a value.
        const r = await sandbox().run({
          language: "python",
          code: `${OUTCOME}\ndef attempt():\n${code.replace(/^/gm, "    ")}\noutcome(attempt)`,
          limits: { timeoutMs: 8000 },
        });
        out[name] = r.ok ? String(r.value) : `run failed: ${r.error.kind}: ${r.error.message}`;
      }
      const clear = (name: string, outcome: string) =>
        name === "libc socket() through ctypes"
          ? // Below Python: Emscripten's socket syscall itself refuses; there is nothing to connect.
            outcome === "OSError: libc socket() refused"
          : /^(OSError|gaierror): /.test(outcome) && outcome.includes(MESSAGE) && outcome.includes("urllib");
      const unclear = Object.fromEntries(Object.entries(out).filter(([name, outcome]) => !clear(name, outcome)));
      assert.deepEqual(unclear, {});
      assert.equal(listener.connections(), 0);
    });
  }
});
