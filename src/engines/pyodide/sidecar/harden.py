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
_pyodide_modules = {}
for _name in list(sys.modules):
    if _name.split(".", 1)[0] in _BLOCKED_ROOTS:
        _pyodide_modules[_name] = sys.modules[_name]
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

# Blocking the names is not enough: Pyodide's modules stay alive behind them, and each of their
# functions and classes (all reachable, if only through object.__subclasses__()) leads by its globals
# to what they imported — the event loop's `scheduleCallback` (a JsProxy) and `create_once_callable`
# (which makes one from any callable), `to_js`, `_pyodide_core` itself — and any JsProxy's
# `.constructor` is the realm's `Function`. So Pyodide's Python side is cut off from the bridge:
# - the event loop: the sandbox's own (loop.py) is the running loop and the policy's, so nothing a
#   guest asks for is Pyodide's WebLoop, which schedules through JavaScript; `time.sleep` is
#   CPython's again (Pyodide's stack-switching sleep is never possible here: there is no JSPI entry);
# - the meta path's JsFinder (it holds the `js` and `pyodide_js` modules) is removed and emptied;
# - every JsProxy, every function of `_pyodide_core` and that module, wherever a Pyodide module or
#   __main__ holds one, is replaced by a function that refuses. What Pyodide's JavaScript calls into
#   (eval_code, the conversions) keeps its own references and never looks these names up;
# - no class of Pyodide's makes a JavaScript object when called (JsException did);
# - `_pyodide_core` cannot be made again: CPython keeps a copy of a built-in module's first contents
#   and `_imp.create_builtin` (or `_imp.create_dynamic`, given the same name) hands out a new module
#   from it, past sys.modules and every import hook. Both are replaced: a built-in module is served
#   from the ones loaded by now (setup.py loads each the sandbox offers; this file loads _ctypes), so
#   nothing a guest can reach keeps CPython's originals; compiled extension files are refused (the
#   sandbox has none it could load: the library's are built for another platform).
# What stays open below this: ctypes calls the interpreter's exported C functions, those that make
# a JsProxy included (docs/seal.md, "Guest layer"); the layers under the guest layer assume that.
def _wasmcell_cut_bridge(modules):
    import asyncio, time, _imp, _ctypes
    core = modules["_pyodide_core"]
    webloop = modules["pyodide.webloop"]
    def refused(*args, **kwargs):
        raise RuntimeError("the sandbox has no JavaScript bridge")
    def bridge(value):
        if value is core or not isinstance(value, type) and type(value).__module__ == "pyodide.ffi":
            return True
        return isinstance(value, types.BuiltinFunctionType) and value.__self__ is core
    # The one class of Pyodide's whose call makes a JavaScript object (a JS Error, from a name and a
    # message); every class stays reachable. Assigned, not deleted: a later `del` leaves the type with
    # no way to make instances at all (the C constructor is not put back).
    core.JsException.__new__ = staticmethod(refused)
    asyncio.events._set_event_loop_policy(_WasmcellPolicy())
    asyncio.events._set_running_loop(_wasmcell_loop)
    time.sleep = webloop._orig_sleep
    jsfinder = modules["_pyodide._importhook"].jsfinder
    sys.meta_path.remove(jsfinder)
    jsfinder.jsproxies.clear()
    for module in [*modules.values(), sys.modules["__main__"]]:
        if module is core or not isinstance(module, types.ModuleType):  # `js`, `pyodide_js`: JsProxies
            continue
        namespace = module.__dict__
        for key, value in list(namespace.items()):
            if bridge(value):
                namespace[key] = refused
    loaded = ((name, sys.modules.get(name)) for name in sys.builtin_module_names)
    served = types.MappingProxyType({name: module for name, module in loaded if module is not None})
    def create_builtin(spec, *, _served=served, _Error=ModuleNotFoundError):
        name = spec.name
        module = _served.get(name) if type(name) is str else None
        if module is None:
            raise _Error("No module named %r (not available in the sandbox)" % (name,), name=name)
        return module
    def create_dynamic(spec, file=None, *, _Error=ImportError):
        raise _Error("compiled extension modules cannot be loaded in the sandbox", name=getattr(spec, "name", None))
    _imp.create_builtin = create_builtin
    _imp.create_dynamic = create_dynamic
_wasmcell_cut_bridge(_pyodide_modules)
del _pyodide_modules, _wasmcell_cut_bridge

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
