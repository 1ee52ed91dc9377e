# Run once per interpreter by the sidecar (main.ts), before the checkpoint (and before the memory
# snapshot is taken, so a sidecar started from the snapshot skips it), in __main__'s globals:
# imports, the guest-visible refusals, the entry point. Never runs guest code.
import sys, os, asyncio, json, ast, linecache, traceback, types, inspect, random
import wasmcell_harness as _h  # the harness, installed under this name (runtime.ts HARNESS_MODULE)
import wasmcell_display as _wasmcell_display  # what runs show (display(), reprs): the harness's too

def _wasmcell_show(item, _open=os.open, _write=os.write, _close=os.close, _flags=os.O_WRONLY, _str=str):
    # One display item to the host: one open of the display device per item, closed to send it
    # (sidecar/bridge.ts). Bytes, so os.write never re-encodes; every write is taken whole. The os
    # functions are bound now (defaults), before guest code that could rebind them runs.
    fd = _open("/dev/wasmcell-display", _flags)
    try:
        data = _str.encode(item, "utf-8", "surrogatepass")
        while data:
            data = data[_write(fd, data):]
    finally:
        _close(fd)

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

# Bound here, before any guest code, so a session rebinding `random.seed` does not change what a
# fork's reseed calls. It is not a wall against the session itself: its code owns its interpreter and
# can rewrite this too (or `random.random`), and its copies inherit whatever it left; the sidecar only
# keeps the call bounded (a deadline, no output). Other sessions and stateless runs never see that state.
_wasmcell_seed_random = random.seed

def _wasmcell_reseed():
    # A fork or a resumed copy draws its own seed the moment it is loaded (as CPython's random does in
    # a forked child), so an eviction before its first run cannot carry the copied state on.
    _wasmcell_seed_random()

_wasmcell_BaseException = BaseException

def _wasmcell_start(code, run_json):
    # run_json: {"limits": <the run's Limits>, "fresh": bool, "reseed": bool}, one typed payload from
    # main.ts (JSON, never a JavaScript object: nothing of the JS realm reaches Python).
    # A session's earlier run may have rebound any builtin or module attribute (json.loads,
    # isinstance…): this names only the harness's functions, which hold what they use (harness.py).
    run = _h.loads(run_json)
    fresh, reseed, limits = run["fresh"], run["reseed"], run["limits"]
    # The checkpoint holds one random state: every stateless run and a session's first run draw a new
    # seed. Never between a session's own runs: a sequence the guest seeded carries on, as it would
    # in one interpreter.
    if reseed:
        _wasmcell_seed_random()
    _wasmcell_display.configure(_wasmcell_show, limits)
    prepared = _h._prepare(code)
    if _h.is_envelope(prepared):
        return _h.encode_envelope(prepared)
    body, last = prepared
    ns = _h.new_namespace() if fresh else _wasmcell_session_ns
    if _h._is_coroutine_code(body) or _h._is_coroutine_code(last):
        # loop.py: a pure-Python event loop, so the run leaves no JavaScript state behind. It is asyncio's
        # code, which a session can break for itself (a loop that spins until the deadline's interrupt
        # lands in it): what escapes it is the run's own error, as an envelope, so the session lives on.
        # A KeyboardInterrupt or MemoryError there is `timeout`/`memory` only if the sidecar saw its
        # interrupt fire or its cap refuse a growth (result.ts), as for one raised in the guest's code.
        try:
            return _h.encode_envelope(_wasmcell_run_async(_h.run_async_envelope(code, ns, limits)))
        except _wasmcell_BaseException as exc:
            return _h.encode_envelope(_h._outcome(exc, None, 0))
    return _h.encode_envelope(_h.run_envelope(code, ns, limits))

_wasmcell_session_ns = _h.new_namespace()

# Every built-in module the sandbox offers is loaded now (into the snapshot): harden.py serves
# built-in modules only from those loaded, so that nothing a guest reaches keeps CPython's
# _imp.create_builtin (which makes _pyodide_core again). Not offered: CPython's test modules and its
# remote debugger. _ctypes is loaded by harden.py (its load changes the JavaScript function table,
# which the memory snapshot does not hold).
for _name in sys.builtin_module_names:
    if _name not in sys.modules and not _name.startswith(("_test", "_xxtest", "xx", "_remote_debugging", "_ctypes")):
        __import__(_name)
del _name
