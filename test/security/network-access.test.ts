// Threat: guest code opens network connections (exfiltration, reaching services on the host).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startListener } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";

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
  "socketpair": probe(lambda: socket.socketpair()),
  "http": probe(lambda: urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=2)),
  "dns": probe(lambda: socket.getaddrinfo("localhost", 80)),
  "raw_socket_inet": raw(41, 2, 1, 0),
  "raw_socket_unix": raw(41, 1, 1, 0),
  "raw_socket_netlink": raw(41, 16, 3, 0),
  "raw_socketpair": raw(53, 1, 1, 0, 0),
  "raw_connect_fd0": raw(42, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      tcp: "PermissionError:EPERM",
      udp: "PermissionError:EPERM",
      unix: "PermissionError:EPERM",
      socketpair: "PermissionError:EPERM",
      http: "URLError",
      // no resolver config and no socket: EAI_AGAIN
      dns: "gaierror:-3",
      raw_socket_inet: "EPERM",
      raw_socket_unix: "EPERM",
      raw_socket_netlink: "EPERM",
      raw_socketpair: "EPERM",
      raw_connect_fd0: "EPERM",
    });
    assert.equal(listener.connections(), 0);
  });
});
