# Run once per interpreter after setup.py, in __main__'s globals: the event loop top-level `await`
# runs on (setup.py's _wasmcell_start hands async code to _wasmcell_run_async).
#
# A pure-Python loop, run to completion inside the synchronous call from JavaScript: it makes no
# JavaScript promise, timer or reference. Pyodide's own WebLoop schedules every callback through
# JavaScript (setTimeout, a JS reference per handle, a promise for the result), which left Pyodide's
# JS reference table changed after every async run and made the sidecar retire; with this loop an
# async run changes nothing outside the WASM memory and the file system, which the reset restores and
# proves. The loop has no I/O to wait for (the sandbox has no sockets or subprocesses; the network
# is a synchronous call into the host): when idle it sleeps until its next timer, in slices of at
# most 50 ms so the deadline's interrupt is seen between them, by writing the milliseconds to the
# idle device (bridge.ts; Atomics.wait in the sidecar, loop.ts). Tasks a stateless run leaves pending
# are Python objects of this loop: the reset drops them with the memory; a session keeps them for its
# next `await`.
import asyncio.base_events as _wasmcell_base_events
import asyncio.events as _wasmcell_events
import time as _wasmcell_time
import os as _wasmcell_os

class _WasmcellIdle:
    """The loop's 'selector': nothing to select, so wait for the next timer (at most 50 ms)."""
    def select(self, timeout, *, _os=_wasmcell_os, _device="/dev/wasmcell-idle"):
        seconds = 0.05 if timeout is None else min(timeout, 0.05)
        if seconds > 0:
            try:
                fd = _os.open(_device, _os.O_WRONLY)
            except FileNotFoundError:  # not in a sidecar (building the snapshot): busy-wait instead
                _wasmcell_time.sleep(seconds)
                return []
            try:
                _os.write(fd, b"%.3f" % (seconds * 1000))
            finally:
                _os.close(fd)
        return []

class _WasmcellLoop(_wasmcell_base_events.BaseEventLoop):
    def __init__(self):
        super().__init__()
        self._selector = _WasmcellIdle()
    def _process_events(self, event_list):
        pass
    def _write_to_self(self):
        pass

_wasmcell_loop = _WasmcellLoop()

class _WasmcellPolicy(_wasmcell_events._BaseDefaultEventLoopPolicy):
    """The policy harden.py installs: its loop is the sandbox's, a new loop another of its kind."""
    _loop_factory = _WasmcellLoop
    def __init__(self):
        super().__init__()
        self.set_event_loop(_wasmcell_loop)

def _wasmcell_run_async(coro):
    """Runs coro to completion on the loop; Pyodide's WebLoop stays the running loop outside it."""
    outer = _wasmcell_events._get_running_loop()
    _wasmcell_events._set_running_loop(None)
    try:
        return _wasmcell_loop.run_until_complete(coro)
    finally:
        _wasmcell_events._set_running_loop(outer)
