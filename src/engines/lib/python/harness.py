"""wasmcell's Python harness: runs one piece of user code and describes the outcome as one JSON envelope.

Shared by both Python tiers, so it knows nothing about its host. Two callers, both in the guest's own
interpreter: the Pyodide sidecar's ``_wasmcell_start`` (sidecar/setup.py) and the native tier's driver
(native/driver.py) call ``run_envelope(code, namespace, limits)`` (or ``run_async_envelope``) and
``encode_envelope``. ``limits`` is the run's limits as the host sent them (a dict of the fields of
src/core/types.ts ``Limits``); the harness reads ``maxResultBytes``.

What a run displays goes through ``wasmcell_display`` (beside this file; each tier configures where
its items go before the run): at the end the harness shows the last expression's rich repr as the
main item and the figures still open, and a run that passed a display cap ends with that
``output_limit`` (the items before it were already sent).

The envelope (UTF-8 JSON, one object):
    {"ok": true,  "value": <JSON data or repr string>, "valueKind": "json" | "repr" | "none"}
    {"ok": false, "error": {"kind", "name", "message", "stack"?, "line"?, "column"?, "limit"?, "bytes"?}}
``kind`` is one of syntax | runtime | output_limit (see src/core/types.ts); the host decides the rest.
An ``output_limit`` says which cap (``limit``) and how much there was (``bytes``, when known); the host
words it (src/kit/failures.ts) and keeps only a cap that can be passed by what a run returns. A
RecursionError is ``runtime``: any guest can raise one in Python's own words, so its name is no proof
that a stack limit fired (src/engines/lib/python/result.ts takes ``stack`` from no envelope anyway).

Why each choice:
- The last top-level expression is compiled on its own in "eval" mode, so its value is returned without
  rewriting the user's code; top-level ``await`` is allowed in both parts.
- Tracebacks keep only frames whose file is the user's code (``<code>``); the harness's and the engine's
  frames are noise to a model and say things about the host it does not need.
- ``KeyboardInterrupt`` and ``MemoryError`` are reported as ``runtime`` errors with their names: the guest
  can raise either itself, so only the host, which knows whether its interrupt fired or its memory cap
  refused an allocation, turns them into ``timeout`` / ``memory`` (src/engines/lib/python/result.ts).
- Values are data: only str/int (within +-2**53)/finite float/bool/None/list/tuple/dict-with-str-keys are
  passed through; anything else comes back as ``repr()``, cut to the result cap.
- ``asyncio`` is imported only by code that needs it (top-level ``await``): it costs ~45 ms of a cold
  native run, which is most of the harness's import time. ``inspect`` (~15 ms) is not imported at all:
  only its CO_COROUTINE flag was needed.
Compatible with CPython 3.11 through 3.14.
"""

import ast
import builtins
import io
import json
import linecache
import sys
import traceback
import types

import wasmcell_display as _display

USER_FILENAME = "<code>"
DEFAULT_MAX_RESULT_BYTES = 1024 * 1024
_SAFE_INT = 2**53
_MAX_DEPTH = 100
_MAX_NAME_CHARS = 200
_MAX_MESSAGE_CHARS = 8192
_MAX_STACK_CHARS = 32768

# Bound at import, before any guest code: the guest runs in this interpreter and can rebind any
# builtin (`builtins.len = ...`), any module attribute (`json.dumps`, `traceback.extract_tb`,
# `sys.__excepthook__`) and any class attribute of a Python class (`json.JSONEncoder.iterencode`).
# Nothing below looks one of those up after the guest's code has run: builtins and the exception
# classes are these private names, functions are held as objects, and JSON is encoded by the C
# encoder itself (`json.dumps` reads `json.JSONEncoder`, which reads `c_make_encoder`, both at call
# time). A run that rebinds one of them breaks its own code, never its envelope; in a session the
# rebinding is the session's own state and the next run is still described. What stays open: the
# traceback module's functions read their module's globals at call time (a run that patches
# `linecache` or `traceback` gets a plainer traceback: those calls fall back), and a guest that
# rewrites this module itself only lies about its own result.
_len, _str, _repr, _type, _isinstance, _issubclass = len, str, repr, type, isinstance, issubclass
_int, _float, _bool, _dict, _list, _tuple, _max = int, float, bool, dict, list, tuple, max
_compile, _eval, _getattr = compile, eval, getattr
_BaseException, _SystemExit, _SyntaxError, _KeyboardInterrupt = BaseException, SystemExit, SyntaxError, KeyboardInterrupt
_ValueError, _TypeError, _MemoryError, _RecursionError, _Exception = ValueError, TypeError, MemoryError, RecursionError, Exception
_BUILTINS = builtins.__dict__
_ModuleType = types.ModuleType
_StringIO = io.StringIO
_sys = sys
_excepthook = sys.__excepthook__
_extract_tb = traceback.extract_tb
_format_list = traceback.format_list
_format_exception_only = traceback.format_exception_only
_linecache = linecache
_ast_Expr, _ast_Expression = ast.Expr, ast.Expression
_PyCF_ONLY_AST, _PyCF_ALLOW_TOP_LEVEL_AWAIT = ast.PyCF_ONLY_AST, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_INF, _NINF = float("inf"), float("-inf")
# A type's own name (the C getter: a metaclass cannot answer for it), and a string as an exact str (a
# str subclass's __len__, slicing or encode are the guest's code; str.__str__ copies it in C).
_type_name_of = type.__dict__["__name__"].__get__
_exact_str = str.__str__
try:
    from _json import encode_basestring as _c_encode_str, make_encoder as _c_make_encoder
    from json.scanner import c_make_scanner as _c_make_scanner

    _c_scan = _c_make_scanner(json.JSONDecoder()) if _c_make_scanner is not None else None
except ImportError:  # an interpreter without the C accelerator: the module's own functions, held
    _c_make_encoder = _c_scan = None
_json_dumps = json.dumps
_json_loads = json.loads


def _no_default(value):
    raise _TypeError("not JSON data")


def to_json(data):
    """JSON text of plain data (what _to_data returns, or an envelope), as ``json.dumps(data,
    ensure_ascii=False, allow_nan=False)`` writes it."""
    if _c_make_encoder is None:
        return _json_dumps(data, ensure_ascii=False, allow_nan=False)
    encode = _c_make_encoder({}, _no_default, _c_encode_str, None, ": ", ", ", False, False, False)
    return "".join(encode(data, 0))


def loads(text):
    """JSON text from the host (a run's parameters), decoded without the json module's rebindable names."""
    if _c_scan is None:
        return _json_loads(text)
    value, end = _c_scan(text, 0)
    if end != _len(text):
        raise _ValueError("trailing data after the JSON value")
    return value


def is_envelope(value):
    """Whether _prepare's answer is a failure envelope (not the compiled code)."""
    return _type(value) is _dict


def _type_name(value):
    try:
        return _exact_str(_type_name_of(_type(value)))
    except _BaseException:
        return "object"


# inspect.CO_COROUTINE: set on a code object compiled with PyCF_ALLOW_TOP_LEVEL_AWAIT that awaits at
# top level (the value has been 0x80 since CPython 3.5).
_CO_COROUTINE = 0x0080


class _NotData(Exception):
    pass


def _to_data(value, depth=0):
    """Plain JSON data, or raise _NotData. Never calls user-defined methods (no __eq__, __iter__ hooks)."""
    if depth > _MAX_DEPTH:
        raise _NotData()
    t = _type(value)
    if value is None or t is _bool or t is _str:
        return value
    if t is _int:
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        raise _NotData()
    if t is _float:
        if value != value or value == _INF or value == _NINF:
            raise _NotData()
        return value
    if t is _list or t is _tuple:
        return [_to_data(v, depth + 1) for v in value]
    if t is _dict:
        out = {}
        for k, v in value.items():
            if _type(k) is not _str:
                raise _NotData()
            out[k] = _to_data(v, depth + 1)
        return out
    raise _NotData()


def _safe_repr(value, limit):
    try:
        text = _exact_str(_repr(value))
    except _BaseException as e:  # a hostile __repr__ must not break the envelope
        text = "<unrepresentable %s: %s>" % (_type_name(value), _type_name(e))
    if _len(text) > limit:
        text = text[:limit] + "...[truncated]"
    return text


def _value_envelope(value, max_bytes):
    if value is None:
        return {"ok": True, "value": None, "valueKind": "none"}
    try:
        data = _to_data(value)
        size = _len(to_json(data).encode("utf-8"))
        if size <= max_bytes:
            return {"ok": True, "value": data, "valueKind": "json"}
        return output_limit("maxResultBytes", "the result value is %d bytes, over the %d-byte limit" % (size, max_bytes), size)
    except _NotData:
        pass
    except _RecursionError:
        pass
    text = _safe_repr(value, max_bytes)
    return {"ok": True, "value": text, "valueKind": "repr"}


def _cut(text, cap, field, keep_end=False):
    """text within cap characters; a cut says which cap (the host applies the same caps again)."""
    text = _exact_str(text)
    if _len(text) <= cap:
        return text
    note = "[%s cut to %d characters]" % (field, cap)
    if keep_end:
        return note + "\n" + text[-(cap - _len(note) - 1):]
    return text[: cap - _len(note) - 2] + "… " + note


def output_limit(limit, message, size=None):
    """An ``output_limit`` envelope naming the cap passed (and how much there was, when known)."""
    envelope = _failure("output_limit", "OutputLimitError", message)
    envelope["error"]["limit"] = limit
    if size is not None:
        envelope["error"]["bytes"] = size
    return envelope


def _max_result_bytes(limits):
    try:
        return _int((limits or {}).get("maxResultBytes", DEFAULT_MAX_RESULT_BYTES))
    except (_TypeError, _ValueError):
        return DEFAULT_MAX_RESULT_BYTES


def _failure(kind, name, message, stack=None, line=None, column=None):
    error = {
        "kind": kind,
        "name": _cut(name, _MAX_NAME_CHARS, "error name"),
        "message": _cut(message, _MAX_MESSAGE_CHARS, "error message"),
    }
    if stack:
        error["stack"] = _cut(stack, _MAX_STACK_CHARS, "traceback", keep_end=True)
    if line is not None:
        error["line"] = line
    if column is not None:
        error["column"] = column
    return {"ok": False, "error": error}


def _exception_message(exc):
    try:
        return _exact_str(_str(exc))
    except _BaseException:
        return "<exception str() failed>"


# Advice in messages the box cannot follow (packages are fixed before the run; nothing is fetched).
_BLOCKED_ADVICE = ("You can install it by calling", "On Pyodide you must", "pyodide.loadPackage", "micropip.install")


def _without_blocked_advice(text):
    """Cuts the sentence that advises installing a package (and what follows) and says why instead."""
    for marker in _BLOCKED_ADVICE:
        at = text.find(marker)
        if at >= 0:
            start = _max(text.rfind(". ", 0, at) + 1, text.rfind("\n", 0, at) + 1, 0)
            head = text[:start].rstrip()
            text = (head + " " if head else "") + "(packages cannot be installed at run time in this sandbox)"
            break
    return text


def _cpython_exception_only(exc):
    """The exception's last lines as CPython's own display prints them, hints included.

    CPython adds "Did you mean: 'total'?" to NameError/AttributeError/ImportError when it *displays* an
    exception (3.10-3.11: in C, in the default excepthook; 3.12+: in the traceback module, which needs
    the traceback's frames for NameError). Asking the default excepthook is the one way that works on
    every version: its output is captured, and the part after the frames is kept.
    """
    plain = "".join(_format_exception_only(_type(exc), exc))
    try:
        buf = _StringIO()
        saved = _sys.stderr
        _sys.stderr = buf
        try:
            _excepthook(_type(exc), exc, exc.__traceback__)
        finally:
            _sys.stderr = saved
        shown = _exact_str(buf.getvalue())
        head = plain.split("\n", 1)[0]
        at = shown.rfind("\n" + head)
        if head and (at >= 0 or shown.startswith(head)):
            return shown[at + 1 :] if at >= 0 else shown
    except _BaseException:
        pass
    return plain


def _exception_text(exc, only):
    """The message: str(exc) with the hint CPython shows after it ("... Did you mean: 'total'?")."""
    message = _exception_message(exc)
    first = only.split("\n", 1)[0]
    at = first.find(message) if message else -1
    if at >= 0:
        message = first[at:]
    return _without_blocked_advice(message)


def _user_traceback(exc):
    """The traceback with only the user's frames, in the usual CPython layout, hints included."""
    try:
        frames = [f for f in _extract_tb(exc.__traceback__) if f.filename == USER_FILENAME]
        only = _cpython_exception_only(exc)
        lines = ["Traceback (most recent call last):\n"]
        lines.extend(_format_list(frames))
        lines.append(_without_blocked_advice(only))
        line = frames[-1].lineno if frames else None
        return "".join(lines), (line if _type(line) is _int else None), _exception_text(exc, only)
    except _BaseException:
        return "%s: %s\n" % (_type_name(exc), _exception_message(exc)), None, _exception_message(exc)


def _syntax_failure(exc):
    line = exc.lineno if _type(exc.lineno) is _int else None
    column = exc.offset if _type(exc.offset) is _int and exc.offset > 0 else None
    try:
        stack = "".join(_format_exception_only(_type(exc), exc))
    except _BaseException:
        stack = None
    message = exc.msg if _type(exc.msg) is _str else _exception_message(exc)
    return _failure("syntax", _type_name(exc), message, stack, line, column)


def _exception_failure(exc):
    name = _type_name(exc)
    stack, line, message = _user_traceback(exc)
    # Every exception out of user code is ``runtime``: a SyntaxError from compile()/eval() inside it,
    # and a RecursionError, real or raised (they cannot be told apart from here, see the module doc).
    return _failure("runtime", name, message, stack, line)


def compile_user_code(code):
    """Returns (body, last_expression) code objects; last_expression is None when the code ends in a statement."""
    flags = _PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = _compile(code, USER_FILENAME, "exec", _PyCF_ONLY_AST)  # ast.parse, without its module's names
    last = None
    if tree.body and _type(tree.body[-1]) is _ast_Expr:
        expr = _ast_Expression(tree.body.pop().value)
        last = _compile(expr, USER_FILENAME, "eval", flags, True)
    body = _compile(tree, USER_FILENAME, "exec", flags, True)
    return body, last


def host_decides(exc):
    """Whether an exception that escaped asyncio's own code goes on to the host (KeyboardInterrupt,
    MemoryError: only the host knows whether its limits fired) rather than being the run's error."""
    return _issubclass(_type(exc), (_KeyboardInterrupt, _MemoryError))


def _is_coroutine_code(code_obj):
    return code_obj is not None and _bool(code_obj.co_flags & _CO_COROUTINE)


def _register_source(code):
    # So traceback lines show the user's source; the entry is overwritten by the next run. A session
    # that replaced linecache.cache only loses its source lines.
    try:
        _linecache.cache[USER_FILENAME] = (_len(code), None, code.splitlines(True), USER_FILENAME)
    except _BaseException:
        pass


def new_namespace():
    module = _ModuleType("__main__")
    module.__dict__["__builtins__"] = _BUILTINS
    return module.__dict__


def _flush_streams():
    for name in ("stdout", "stderr"):
        try:
            _getattr(_sys, name).flush()
        except _BaseException:
            pass


def _prepare(code):
    """Compiles the user's code: returns (body, last) or a failure envelope."""
    _register_source(code)
    try:
        return compile_user_code(code)
    except _SyntaxError as exc:
        return _syntax_failure(exc)
    except _ValueError as exc:  # source with NUL bytes
        return _failure("syntax", _type_name(exc), _exception_message(exc))
    except _MemoryError as exc:
        return _exception_failure(exc)
    except _RecursionError as exc:  # a deeply nested expression overflows the parser
        return _failure("syntax", _type_name(exc), "the code is nested too deeply to parse")


def _exit_code_is_success(code):
    return code is None or (_type(code) in (_int, _bool, _float) and code == 0)


def _show_results(exc, value):
    """The run's display items that come at its end: the last expression's rich repr (the main
    result), then the figures still open (wasmcell_display.py). Not after an interrupt or exit."""
    ordinary = exc is None or _issubclass(_type(exc), _Exception)
    try:
        if exc is None and value is not None:
            _display.main_result(value)
        _display.finish(ordinary)
    except _BaseException:
        pass
    _flush_streams()


def _display_breach(envelope):
    """A run that passed a display cap ends with it (the items before it were sent)."""
    breach = _display.breach()
    if breach is None or not envelope.get("ok"):
        return envelope
    limit, size = breach
    return output_limit(limit, "the run passed limits.%s" % limit, size)


def _outcome(exc, value, max_result_bytes):
    """The envelope for a finished run: exc is the exception it ended with, or None. Whatever the
    guest's objects do while they are described (a __repr__, __str__ or exit code that raises), the
    answer is an envelope."""
    _flush_streams()
    _show_results(exc, value)
    return _display_breach(_envelope_of(exc, value, max_result_bytes))


def _envelope_of(exc, value, max_result_bytes):
    try:
        if exc is None:
            try:
                return _value_envelope(value, max_result_bytes)
            except _BaseException as e:
                return _exception_failure(e)
        if _issubclass(_type(exc), _SystemExit):
            code = exc.code
            if _exit_code_is_success(code):
                return {"ok": True, "value": None, "valueKind": "none"}
            return _failure("runtime", "SystemExit", "the code called exit(%s)" % _safe_repr(code, 200))
        return _exception_failure(exc)
    except _BaseException as e:
        return _failure("runtime", _type_name(exc if exc is not None else e), "the run's outcome could not be described (%s)" % _type_name(e))


async def run_async_envelope(code, namespace=None, limits=None):
    """Runs code (top-level await allowed) in a fresh namespace, or the one given (sessions keep state on
    purpose); returns the envelope dict. Code without top-level await runs synchronously, so the guest may
    drive its own event loop exactly as it would at a prompt."""
    prepared = _prepare(code)
    if is_envelope(prepared):
        return prepared
    body, last = prepared
    is_async = _is_coroutine_code(body) or _is_coroutine_code(last)
    own_task, all_tasks = _task_tools() if is_async else (None, None)
    if namespace is None:
        namespace = new_namespace()
    value, error = None, None
    try:
        result = _eval(body, namespace)
        if _is_coroutine_code(body):
            await result
        if last is not None:
            value = _eval(last, namespace)
            if _is_coroutine_code(last):
                value = await value
    except _BaseException as exc:  # every guest failure becomes data
        error = exc
    finally:
        if is_async:
            _cancel_background_tasks(own_task, all_tasks)
    return _outcome(error, value, _max_result_bytes(limits))


def run_envelope(code, namespace=None, limits=None):
    """The synchronous entry point: top-level await gets its own event loop (``asyncio.run``)."""
    prepared = _prepare(code)
    if is_envelope(prepared):
        return prepared
    body, last = prepared
    if _is_coroutine_code(body) or _is_coroutine_code(last):
        import asyncio  # only here (before the guest's code runs): see the module docstring

        # asyncio.run's teardown (cancelling what is left, closing the loop) runs asyncio's code after the
        # guest's, which the guest can have broken for itself: that is its own error. KeyboardInterrupt
        # and MemoryError go on to the caller, which knows whether its limits fired.
        try:
            return asyncio.run(run_async_envelope(code, namespace, limits))
        except _BaseException as exc:
            if host_decides(exc):
                raise
            return _outcome(exc, None, 0)
    if namespace is None:
        namespace = new_namespace()
    value, error = None, None
    try:
        _eval(body, namespace)
        if last is not None:
            value = _eval(last, namespace)
    except _BaseException as exc:  # every guest failure becomes data
        error = exc
    return _outcome(error, value, _max_result_bytes(limits))


def _task_tools():
    """This run's own task and asyncio's all_tasks, taken before the guest's code runs: a guest that
    rebinds asyncio.current_task must not make the harness cancel its own task."""
    try:
        tasks = _sys.modules["asyncio.tasks"]  # loaded: this runs on an asyncio loop
        return tasks.current_task(), tasks.all_tasks
    except _BaseException:
        return None, None


def _cancel_background_tasks(own_task, all_tasks):
    """Best effort: tasks the run started and did not await do not outlive it. The host's reset (a new
    process, or a memory reset that drops the event loop's timers) is what guarantees it."""
    if own_task is None or all_tasks is None:
        return
    try:
        for task in all_tasks():
            if task is not own_task:
                task.cancel()
    except _BaseException:
        pass


def encode_envelope(envelope):
    try:
        return to_json(envelope)
    except _BaseException:
        return to_json(_failure("runtime", "InternalError", "the result could not be encoded"))
