"""wasmcell's display module: what a Python run shows comes back as MIME bundles (issue 37).

Loaded by both Python tiers under this name: the Pyodide sidecar installs it beside the harness
(sidecar/main.ts), the native driver finds it bound beside itself (native/jail.ts). The harness
imports it; the tier's caller says where items go with ``configure(emit, limits)`` before each run:
``emit`` takes one JSON text ``{"data": {mime: value}, "main": bool}`` (the native driver writes it
as a line on its result pipe, the sidecar to its display device), ``limits`` is the run's limits.

What it gives guest code, as IPython has it:
- ``display(*objs, raw=False, include=None, exclude=None)``, also a builtin (as in a notebook);
- ``from IPython.display import display, HTML, Markdown, Image, JSON, SVG, Latex`` (a small shim,
  served by a finder last on ``sys.meta_path``, so a real IPython, when importable, wins);
- the ``_repr_mimebundle_`` and ``_repr_*_`` protocol (html, markdown, svg, png, jpeg, latex, json,
  javascript, pdf); a repr method that raises falls back to the other types and ``text/plain``
  with one line on stderr, never a failed run;
- pandas DataFrames and Series as ``text/html`` + ``text/plain`` (+ their data as
  ``application/json`` when small); PIL images as PNG; matplotlib figures as PNG (SVG too after
  ``set_matplotlib_formats("svg")``) on ``plt.show()`` and, at the end of the run, every figure
  still open (this module is matplotlib's backend: ``module://wasmcell_display``).

Nothing here is trusted by the host: the guest owns this interpreter and can call ``emit`` with
anything. The host parses every item again (src/kit/display.ts). The checks here are so that honest
code gets a clear stderr line (an unknown MIME type dropped, bytes that are not base64) or a clean
``output_limit`` (the run's caps, counted as the host counts them) instead of a refused item.
"""

import binascii as _binascii
import builtins as _builtins
import json as _json
import os as _os
import sys as _sys
import types as _types

# The guest runs in this interpreter and may rebind any builtin (`builtins.str = ...`); this module's
# code runs after it (a session's next run, the end of this one). A name a function here uses is
# looked up in these globals before the builtins, so binding every builtin it uses here, at import and
# before any guest code, keeps what each means. A guest that edits this module's globals only
# falsifies its own items: the host parses every item again.
_B = _builtins.__dict__
(
    AttributeError, BaseException, Exception, TypeError, ValueError, any, bool, bytearray, callable,
    classmethod, dict, getattr, globals, hasattr, id, int, isinstance, len, memoryview, open, print,
    repr, set, setattr, staticmethod, str, super, tuple, type,
) = (
    _B["AttributeError"], _B["BaseException"], _B["Exception"], _B["TypeError"], _B["ValueError"],
    _B["any"], _B["bool"], _B["bytearray"], _B["callable"], _B["classmethod"], _B["dict"],
    _B["getattr"], _B["globals"], _B["hasattr"], _B["id"], _B["int"], _B["isinstance"], _B["len"],
    _B["memoryview"], _B["open"], _B["print"], _B["repr"], _B["set"], _B["setattr"], _B["staticmethod"],
    _B["str"], _B["super"], _B["tuple"], _B["type"],
)
del _B

TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/svg+xml", "application/javascript")
_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF8",),
    "image/webp": (b"RIFF",),
    "application/pdf": (b"%PDF",),
}
BINARY_TYPES = tuple(_SIGNATURES)
ALLOWED = TEXT_TYPES + BINARY_TYPES + ("application/json",)
_REPR_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_latex_", "text/latex"),
    ("_repr_json_", "application/json"),
    ("_repr_javascript_", "application/javascript"),
    ("_repr_pdf_", "application/pdf"),
)
_MAX_PLAIN = 100_000
# A DataFrame's data travels as JSON only when it is small (rows x columns).
_MAX_JSON_CELLS = 10_000

_json_dumps = _json.dumps
_repr = repr


def _b64encode(data):
    return _binascii.b2a_base64(data, newline=False).decode("ascii")


class _State:
    emit = None
    limits = {}
    count = 0
    bytes = 0
    breach = None
    main_sent = False
    figure_formats = ("png",)
    shown_figures = set()


_state = _State()


def configure(emit, limits):
    """Where this run's items go, and its caps. Called by the tier before every run."""
    _state.emit = emit
    _state.limits = dict(limits or {})
    _state.count = 0
    _state.bytes = 0
    _state.breach = None
    _state.main_sent = False
    _state.shown_figures = set()


def breach():
    """(limit, size) of the first cap this run passed, or None: the harness ends the run with it."""
    return _state.breach


def _limit(name, default):
    try:
        return int(_state.limits.get(name, default))
    except (TypeError, ValueError):
        return default


def _warn(text):
    try:
        _sys.stderr.write("display: %s\n" % text)
    except BaseException:
        pass


def _utf8(text):
    return len(text.encode("utf-8", "surrogatepass"))


def _size(data):
    n = 0
    for mime, value in data.items():
        if mime == "application/json":
            n += _utf8(_json_dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False))
        else:
            n += _utf8(value)
    return n


def _publish(data, main=False):
    """Sends one bundle within the run's caps; past one, records the breach and sends nothing more."""
    if _state.breach is not None:
        return
    if _state.count >= _limit("maxResults", 64):
        _state.breach = ("maxResults", None)
        return
    size = _size(data)
    if size > _limit("maxDisplayItemBytes", 4 << 20):
        _state.breach = ("maxDisplayItemBytes", size)
        return
    if _state.bytes + size > _limit("maxDisplayBytes", 16 << 20):
        _state.breach = ("maxDisplayBytes", None)
        return
    _state.count += 1
    _state.bytes += size
    item = {"data": data, "main": bool(main)}
    if _state.emit is None:  # no tier configured this interpreter: show the text, as a terminal would
        print(data["text/plain"])
        return
    _state.emit(_json_dumps(item, ensure_ascii=False, allow_nan=False))


def _plain(obj):
    try:
        text = _repr(obj)
    except BaseException as e:
        text = "<unrepresentable %s: %s>" % (type(obj).__name__, type(e).__name__)
    if not isinstance(text, str):
        text = "<unrepresentable %s>" % type(obj).__name__
    if len(text) > _MAX_PLAIN:
        text = text[:_MAX_PLAIN] + "...[truncated]"
    return text


def _as_base64(mime, value):
    """A binary repr's value as base64 text: bytes are encoded, a str is taken as base64 already."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        text = _b64encode(raw)
    elif isinstance(value, str):
        text = "".join(value.split())
        try:
            raw = _binascii.a2b_base64(text, strict_mode=True)
        except Exception:
            raise ValueError("its %s value is not base64" % mime)
    else:
        raise ValueError("its %s value is %s, not bytes" % (mime, type(value).__name__))
    if not raw.startswith(_SIGNATURES[mime]):
        raise ValueError("its %s value is not a %s" % (mime, mime.split("/")[1].upper()))
    return text


def _clean(mime, value, where):
    """The value for one MIME type as the host takes it, or None (with a stderr line) when it is not."""
    if value is None:
        return None
    if isinstance(value, tuple) and len(value) == 2:  # (data, metadata), as IPython allows
        value = value[0]
    try:
        if mime in BINARY_TYPES:
            return _as_base64(mime, value)
        if mime == "application/json":
            if isinstance(value, str):
                value = _json.loads(value)
            _json_dumps(value, allow_nan=False)
            return value
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if not isinstance(value, str):
            raise ValueError("its %s value is %s, not text" % (mime, type(value).__name__))
        return value
    except Exception as e:
        _warn("%s: %s; left out" % (where, e))
        return None


def _call_repr(obj, method, mime):
    """obj.method() for one MIME type; a method that raises is left out with a line on stderr."""
    try:
        fn = getattr(obj, method, None)
    except Exception:
        return None
    if fn is None or isinstance(obj, type) or not callable(fn):
        return None
    where = "%s.%s" % (type(obj).__name__, method)
    try:
        value = fn()
    except Exception as e:
        _warn("%s raised %s: %s; showing the other formats" % (where, type(e).__name__, e))
        return None
    return _clean(mime, value, where)


def _special(obj, data):
    """The types IPython's formatters know without a repr method: figures, DataFrames, PIL images."""
    module = type(obj).__module__ or ""
    name = type(obj).__name__
    if module.startswith("matplotlib.") and name == "Figure":
        _figure_bundle(obj, data)
        return True
    if module.startswith("pandas.") and name in ("DataFrame", "Series"):
        frame = obj.to_frame() if name == "Series" else obj
        html = _call_repr(frame, "_repr_html_", "text/html")
        if html:
            data["text/html"] = html
        try:
            if obj.size <= _MAX_JSON_CELLS:
                data["application/json"] = _json.loads(obj.to_json(orient="split", date_format="iso"))
        except Exception:
            pass
        return True
    if module.startswith("PIL.") and hasattr(obj, "save") and hasattr(obj, "mode"):
        try:
            import io

            buf = io.BytesIO()
            obj.save(buf, format="PNG")
            data["image/png"] = _b64encode(buf.getvalue())
        except Exception as e:
            _warn("a PIL image could not be saved as PNG (%s: %s)" % (type(e).__name__, e))
        return True
    return False


def bundle(obj, include=None, exclude=None):
    """obj's MIME bundle as display() shows it: its rich reprs that work, and text/plain always."""
    data = {}
    handled = False
    try:
        handled = _special(obj, data)
    except Exception as e:
        _warn("%s could not be shown richly (%s: %s)" % (type(obj).__name__, type(e).__name__, e))
    if not handled:
        mimebundle = None
        try:
            fn = getattr(obj, "_repr_mimebundle_", None)
        except Exception:
            fn = None
        if fn is not None and callable(fn) and not isinstance(obj, type):
            try:
                mimebundle = fn(include=include, exclude=exclude)
            except Exception as e:
                _warn("%s._repr_mimebundle_ raised %s: %s; showing the other formats" % (type(obj).__name__, type(e).__name__, e))
        if isinstance(mimebundle, tuple) and len(mimebundle) == 2:
            mimebundle = mimebundle[0]
        if isinstance(mimebundle, dict):
            _merge(data, mimebundle, "%s._repr_mimebundle_" % type(obj).__name__)
        for method, mime in _REPR_METHODS:
            if mime not in data:
                value = _call_repr(obj, method, mime)
                if value is not None:
                    data[mime] = value
    if "text/plain" not in data:
        data["text/plain"] = _plain(obj)
    if include:
        data = {k: v for k, v in data.items() if k in include or k == "text/plain"}
    if exclude:
        data = {k: v for k, v in data.items() if k not in exclude or k == "text/plain"}
    return data


def _merge(data, raw, where):
    for mime, value in raw.items():
        if mime not in ALLOWED:
            _warn("%s: MIME type %r is not one wasmcell returns; left out" % (where, str(mime)[:100]))
            continue
        clean = _clean(mime, value, where)
        if clean is not None:
            data[mime] = clean


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None, raw=False, clear=False, **kwargs):
    """Shows each object as a rich item, in order (IPython's display; raw=True takes MIME dicts)."""
    for obj in objs:
        if raw:
            if not isinstance(obj, dict):
                raise TypeError("display(raw=True) takes MIME-type dicts, not %s" % type(obj).__name__)
            data = {}
            _merge(data, obj, "display(raw=True)")
            if "text/plain" not in data:
                data["text/plain"] = data.get("text/markdown") or "<%s>" % ", ".join(data)
            _publish(data)
        else:
            _publish(bundle(obj, include, exclude))
    return None


def main_result(value):
    """The last expression's value as the run's main item, when it has a rich repr (more than text)."""
    try:
        data = bundle(value)
    except BaseException:
        return
    if len(data) > 1:
        if type(value).__name__ == "Figure":
            _state.shown_figures.add(id(value))
        _publish(data, main=True)


# ---------------------------------------------------------------------------------------------
# matplotlib: this module is the backend (MPLBACKEND=module://wasmcell_display), so plt.show() shows
# every open figure; figures still open when the run ends are shown then (finish()). Both close what
# they showed, as Jupyter's inline backend does.

backend_version = "wasmcell"


def _figure_bundle(fig, data):
    import io

    for fmt in _state.figure_formats:
        buf = io.BytesIO()
        try:
            fig.savefig(buf, format=fmt, bbox_inches="tight")
        except Exception as e:
            _warn("a figure could not be drawn as %s (%s: %s)" % (fmt, type(e).__name__, e))
            continue
        if fmt == "png":
            data["image/png"] = _b64encode(buf.getvalue())
        elif fmt == "svg":
            data["image/svg+xml"] = buf.getvalue().decode("utf-8")
        elif fmt in ("jpeg", "jpg"):
            data["image/jpeg"] = _b64encode(buf.getvalue())
        elif fmt == "pdf":
            data["application/pdf"] = _b64encode(buf.getvalue())


def set_matplotlib_formats(*formats):
    """Which formats figures are drawn in: "png" (the default), "svg", "jpeg", "pdf"."""
    chosen = tuple(str(f).lower() for f in formats if str(f).lower() in ("png", "svg", "jpeg", "jpg", "pdf"))
    if not chosen:
        raise ValueError("set_matplotlib_formats takes 'png', 'svg', 'jpeg' or 'pdf'")
    _state.figure_formats = chosen


def _open_figures():
    pyplot = _sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return None, []
    try:
        return pyplot, [pyplot.figure(n) for n in pyplot.get_fignums()]
    except Exception:
        return pyplot, []


def show(*args, **kwargs):
    """plt.show(): every open figure, in order, then closed."""
    pyplot, figures = _open_figures()
    for fig in figures:
        if id(fig) not in _state.shown_figures:
            display(fig)
    if pyplot is not None:
        try:
            pyplot.close("all")
        except Exception:
            pass
    _state.shown_figures = set()


def new_figure_manager(num, *args, **kwargs):
    from matplotlib.backends import backend_agg

    return backend_agg.new_figure_manager(num, *args, **kwargs)


def new_figure_manager_given_figure(num, figure):
    from matplotlib.backends import backend_agg

    return backend_agg.new_figure_manager_given_figure(num, figure)


def draw_if_interactive(*args, **kwargs):
    return None


def __getattr__(name):
    # The canvas class, loaded only when matplotlib asks for it (matplotlib is imported by then), and
    # kept in this module's namespace: pyplot copies the backend module's vars right after asking.
    if name in ("FigureCanvas", "FigureManager"):
        from matplotlib.backends import backend_agg

        globals()["FigureCanvas"] = backend_agg.FigureCanvasAgg
        globals()["FigureManager"] = backend_agg.FigureManagerBase
        return globals()[name]
    raise AttributeError(name)


def finish(ok=True):
    """The end of a run: figures still open are shown (when it did not fail), then closed."""
    if "matplotlib.pyplot" not in _sys.modules:
        return
    if ok:
        show()
    else:
        try:
            _sys.modules["matplotlib.pyplot"].close("all")
        except Exception:
            pass


# ---------------------------------------------------------------------------------------------
# IPython.display's objects, as far as a run uses them.


class DisplayObject:
    _mime = "text/plain"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if filename is not None and data is None:
            with open(filename, "rb" if self._mime in BINARY_TYPES else "r") as f:
                data = f.read()
        if url is not None and data is None:
            raise ValueError("%s(url=...) is not supported here: pass the data or a filename" % type(self).__name__)
        self.data = data
        self.metadata = metadata

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {self._mime: self.data}

    def __repr__(self):
        return "<IPython.core.display.%s object>" % type(self).__name__


class HTML(DisplayObject):
    _mime = "text/html"


class Markdown(DisplayObject):
    _mime = "text/markdown"


class Latex(DisplayObject):
    _mime = "text/latex"


class SVG(DisplayObject):
    _mime = "image/svg+xml"


class Javascript(DisplayObject):
    _mime = "application/javascript"


class JSON(DisplayObject):
    _mime = "application/json"

    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        super().__init__(data, url, filename, metadata)
        if isinstance(self.data, str):
            self.data = _json.loads(self.data)

    def __repr__(self):
        return _plain(self.data)


class Image(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None, metadata=None, **kwargs):
        if isinstance(data, str) and filename is None and _os.path.exists(data):
            data, filename = None, data
        if format is None:
            name = (filename or "").lower()
            format = "jpeg" if name.endswith((".jpg", ".jpeg")) else "png"
        self._mime = "image/jpeg" if format.lower() in ("jpeg", "jpg") else "image/%s" % format.lower()
        if self._mime not in BINARY_TYPES:
            raise ValueError("Image format %r is not one wasmcell returns (png, jpeg, gif, webp)" % format)
        super().__init__(data, url, filename, metadata)
        self.width, self.height = width, height


class Pretty(DisplayObject):
    pass


def clear_output(wait=False):
    """Nothing to clear: items already shown stay in the run's results."""
    return None


_SHIM_NAMES = ("display", "HTML", "Markdown", "Latex", "SVG", "Javascript", "JSON", "Image", "Pretty", "DisplayObject", "clear_output", "set_matplotlib_formats")


class _IPythonShim:
    """`import IPython.display` works in a run: a finder placed last on sys.meta_path, so a real IPython
    (when the library has one) is found first. Nothing is made until code imports it."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in ("IPython", "IPython.display"):
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, cls, is_package=name == "IPython")

    @staticmethod
    def create_module(spec):
        module = _types.ModuleType(spec.name, "wasmcell's stand-in for %s: display() and its objects" % spec.name)
        if spec.name == "IPython":
            module.get_ipython = lambda: None
        else:
            for name in _SHIM_NAMES:
                setattr(module, name, globals()[name])
        return module

    @staticmethod
    def exec_module(module):
        return None


def _install_ipython_shim():
    if not any(f is _IPythonShim for f in _sys.meta_path):
        _sys.meta_path.append(_IPythonShim)


_install_ipython_shim()
if "matplotlib" not in _sys.modules:
    # matplotlib reads it when it is first imported: this module is its backend (see show()). Set once
    # here, before any guest code, not per run: os.environ's setter calls builtins a session may have
    # rebound. It is wasmcell's own fixed setting, part of the environment every run sees.
    _os.environ["MPLBACKEND"] = "module://wasmcell_display"
_builtins.display = display
