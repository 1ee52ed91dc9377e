# The guest-level blocks on the JavaScript bridge (see guards.ts). Run by the sidecar after every
# load, in __main__'s globals: Pyodide's own start-up from a snapshot imports _pyodide_core and
# friends, so these cannot be in the snapshot.
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
# The one name of Pyodide's that stays: pyodide.http, as the sandbox's own module over the host's
# gated fetch (pyfetch.py), never Pyodide's (which holds JavaScript objects). `pyodide` itself stays
# blocked, so `from pyodide.http import pyfetch` works and `import pyodide` does not.
sys.modules["pyodide.http"] = sys.modules["wasmcell_pyfetch"]
del _api_stub, _js_stub, _config
sys.meta_path.insert(0, _WasmcellBlockedFinder)

# The audit hook refuses, from C (sys.audit runs it before the operation; the guest cannot remove a
# hook): gc introspection, and every socket and name lookup. Sockets go nowhere here — the sidecar
# has no network of its own, and Emscripten's socket emulation would fail slowly or crash the
# interpreter — so the answer is at once and says what does work; below this, the socket syscall
# itself is refused in JavaScript (guards.ts), which ctypes cannot get around either. Everything the
# hook uses is bound as a default argument when it is defined and nothing names it afterwards: no
# global the guest could rebind, no cell a traceback's frame could write to.
def _wasmcell_make_audit_hook():
    import _socket, errno
    def hook(event, args, *,
             _gc=frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"}),
             _sockets=frozenset({"socket.__new__", "socket.bind", "socket.connect", "socket.sendto", "socket.sendmsg"}),
             _lookups=frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"}),
             _socket_error=(OSError, errno.ENETUNREACH, _WASMCELL_NO_SOCKET),
             _lookup_error=(_socket.gaierror, getattr(_socket, "EAI_NONAME", -2), _WASMCELL_NO_LOOKUP),
             _RuntimeError=RuntimeError):
        if event in _gc:
            raise _RuntimeError("%s is not available in the sandbox" % event)
        if event in _sockets:
            raise _socket_error[0](_socket_error[1], _socket_error[2])
        if event in _lookups:
            raise _lookup_error[0](_lookup_error[1], _lookup_error[2])
    return hook
sys.addaudithook(_wasmcell_make_audit_hook())
del _name, _wasmcell_make_audit_hook
