// Threat: guest code opens network connections (exfiltration, reaching services on the host).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startListener } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";
import { closePyodide, PY_PROBE, runPy } from "../helpers/pyodide.ts";

describe("native", () => {
  let listener: Awaited<ReturnType<typeof startListener>>;
  before(async () => (listener = await startListener()));
  after(async () => {
    await listener.close();
    await closeNative();
  });

  it("every socket is refused, from Python and from raw ctypes syscalls; the host listener sees nothing", async () => {
    const port = listener.port;
    const r = await runNative(`${PROBES}
import socket, urllib.request
{
  "tcp": probe(lambda: socket.create_connection(("127.0.0.1", ${port}), timeout=2)),
  "udp": probe(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ${port}))),
  "unix": probe(lambda: socket.socket(socket.AF_UNIX)),
  "socketpair_unix": probe(lambda: socket.socketpair()),
  "socketpair_inet": probe(lambda: socket.socketpair(socket.AF_INET)),
  "http": probe(lambda: urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=2)),
  "dns": probe(lambda: socket.getaddrinfo("localhost", 80)),
  "raw_socket_inet": raw(41, 2, 1, 0),
  "raw_socket_unix": raw(41, 1, 1, 0),
  "raw_socket_netlink": raw(41, 16, 3, 0),
  "raw_socketpair_inet": raw(53, 2, 1, 0, 0),
  "raw_connect_fd0": raw(42, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      tcp: "PermissionError:EPERM",
      udp: "PermissionError:EPERM",
      unix: "PermissionError:EPERM",
      // a pair connected only to itself (asyncio's self-pipe needs it); nothing else is reachable
      socketpair_unix: "ALLOWED",
      socketpair_inet: "PermissionError:EPERM",
      http: "URLError",
      // no resolver config and no socket: EAI_AGAIN
      dns: "gaierror:-3",
      raw_socket_inet: "EPERM",
      raw_socket_unix: "EPERM",
      raw_socket_netlink: "EPERM",
      raw_socketpair_inet: "EPERM",
      raw_connect_fd0: "EPERM",
    });
    assert.equal(listener.connections(), 0);
  });
});

describe("pyodide", () => {
  let listener: Awaited<ReturnType<typeof startListener>>;
  before(async () => (listener = await startListener()));
  after(async () => {
    await listener.close();
    await closePyodide();
  });

  // (Emscripten answers getaddrinfo from a fake in-process table, so DNS "works" without any network.)
  it("TCP and HTTP fail from Python; the host listener sees nothing", async () => {
    const port = listener.port;
    const r = await runPy(`${PY_PROBE}
import socket, urllib.request
{
  "tcp": probe(lambda: socket.create_connection(("127.0.0.1", ${port}), timeout=2)),
  "http": probe(lambda: urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=2)),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    const v = (r.ok ? r.value : {}) as Record<string, string>;
    for (const [k, outcome] of Object.entries(v)) assert.notEqual(outcome, "ALLOWED", k);
    assert.equal(listener.connections(), 0);
  });
});
