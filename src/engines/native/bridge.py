"""wasmcell's network bridge inside the native jail (imported by driver.py only for a run with network).

The jail's network namespace has only ``lo``. This module listens on 127.0.0.1 there and relays each
connection, byte for byte, to the host proxy's unix socket (bound into the jail); the driver points
HTTP_PROXY/HTTPS_PROXY at it, so unmodified ``requests`` and ``urllib`` send their requests (absolute
URIs for http, CONNECT for https) to the host, which decides each one.

It runs in the guest's own process, so the guest can stop it, bypass it or talk to the unix socket
itself: none of that matters, because the host proxy applies the run's policy to whatever reaches it,
and nothing else can be reached from this namespace. The bridge is plumbing, not a boundary.
"""

import select
import socket
import threading

_CHUNK = 65536


def start(unix_path):
    """Starts the relay in a daemon thread; returns the loopback port it listens on."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    threading.Thread(target=_accept, args=(listener, unix_path), daemon=True, name="wasmcell-net").start()
    return port


def _accept(listener, unix_path):
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(unix_path)
        except OSError:
            client.close()
            continue
        try:
            threading.Thread(target=_relay, args=(client, upstream), daemon=True, name="wasmcell-net").start()
        except RuntimeError:  # no thread left (the jail's pids cap): refuse this connection only
            client.close()
            upstream.close()


def _relay(a, b):
    """Copies both ways until both sides have ended; a half-close is passed on as a shutdown."""
    peer = {a: b, b: a}
    open_ = {a, b}
    try:
        while open_:
            readable, _, _ = select.select(list(open_), [], [])
            for s in readable:
                data = s.recv(_CHUNK)
                if data:
                    peer[s].sendall(data)
                    continue
                open_.discard(s)
                try:
                    peer[s].shutdown(socket.SHUT_WR)
                except OSError:
                    pass
    except OSError:
        pass
    finally:
        a.close()
        b.close()
