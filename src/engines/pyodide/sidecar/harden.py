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
del _api_stub, _js_stub, _config
sys.meta_path.insert(0, _WasmcellBlockedFinder)

_REFUSED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
def _wasmcell_audit(event, args):
    if event in _REFUSED_EVENTS:
        raise RuntimeError("%s is not available in the sandbox" % event)
sys.addaudithook(_wasmcell_audit)
del _name
