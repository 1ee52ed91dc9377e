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

# Bound at import: a run that patches json.dumps or repr-related builtins must not break its own
# envelope (it can only ever affect its own result, but a confusing one helps nobody).
_json_dumps = json.dumps
_repr = repr
_isinstance = isinstance

# inspect.CO_COROUTINE: set on a code object compiled with PyCF_ALLOW_TOP_LEVEL_AWAIT that awaits at
# top level (the value has been 0x80 since CPython 3.5).
_CO_COROUTINE = 0x0080


class _NotData(Exception):
    pass


def _to_data(value, depth=0):
    """Plain JSON data, or raise _NotData. Never calls user-defined methods (no __eq__, __iter__ hooks)."""
    if depth > _MAX_DEPTH:
        raise _NotData()
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        raise _NotData()
    if t is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _NotData()
        return value
    if t is list or t is tuple:
        return [_to_data(v, depth + 1) for v in value]
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotData()
            out[k] = _to_data(v, depth + 1)
        return out
    raise _NotData()


def _safe_repr(value, limit):
    try:
        text = _repr(value)
    except BaseException as e:  # a hostile __repr__ must not break the envelope
        text = "<unrepresentable %s: %s>" % (type(value).__name__, type(e).__name__)
    if len(text) > limit:
        text = text[:limit] + "...[truncated]"
    return text


def _value_envelope(value, max_bytes):
    if value is None:
        return {"ok": True, "value": None, "valueKind": "none"}
    try:
        data = _to_data(value)
        text = _json_dumps(data, ensure_ascii=False, allow_nan=False)
        if len(text.encode("utf-8")) <= max_bytes:
            return {"ok": True, "value": data, "valueKind": "json"}
        size = len(text.encode("utf-8"))
        return output_limit("maxResultBytes", "the result value is %d bytes, over the %d-byte limit" % (size, max_bytes), size)
    except _NotData:
        pass
    except RecursionError:
        pass
    text = _safe_repr(value, max_bytes)
    return {"ok": True, "value": text, "valueKind": "repr"}


def _cut(text, cap, field, keep_end=False):
    """text within cap characters; a cut says which cap (the host applies the same caps again)."""
    if len(text) <= cap:
        return text
    note = "[%s cut to %d characters]" % (field, cap)
    if keep_end:
        return note + "\n" + text[-(cap - len(note) - 1):]
    return text[: cap - len(note) - 2] + "… " + note


def output_limit(limit, message, size=None):
    """An ``output_limit`` envelope naming the cap passed (and how much there was, when known)."""
    envelope = _failure("output_limit", "OutputLimitError", message)
    envelope["error"]["limit"] = limit
    if size is not None:
        envelope["error"]["bytes"] = size
    return envelope


def _max_result_bytes(limits):
    try:
        return int((limits or {}).get("maxResultBytes", DEFAULT_MAX_RESULT_BYTES))
    except (TypeError, ValueError):
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
        return str(exc)
    except BaseException:
        return "<exception str() failed>"


# Advice in messages the box cannot follow (packages are fixed before the run; nothing is fetched).
_BLOCKED_ADVICE = ("You can install it by calling", "On Pyodide you must", "pyodide.loadPackage", "micropip.install")


def _without_blocked_advice(text):
    """Cuts the sentence that advises installing a package (and what follows) and says why instead."""
    for marker in _BLOCKED_ADVICE:
        at = text.find(marker)
        if at >= 0:
            start = max(text.rfind(". ", 0, at) + 1, text.rfind("\n", 0, at) + 1, 0)
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
    plain = "".join(traceback.format_exception_only(type(exc), exc))
    try:
        import io

        buf = io.StringIO()
        saved = sys.stderr
        sys.stderr = buf
        try:
            sys.__excepthook__(type(exc), exc, exc.__traceback__)
        finally:
            sys.stderr = saved
        shown = buf.getvalue()
        head = plain.split("\n", 1)[0]
        at = shown.rfind("\n" + head)
        if head and (at >= 0 or shown.startswith(head)):
            return shown[at + 1 :] if at >= 0 else shown
    except BaseException:
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
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == USER_FILENAME]
        only = _cpython_exception_only(exc)
        lines = ["Traceback (most recent call last):\n"]
        lines.extend(traceback.format_list(frames))
        lines.append(_without_blocked_advice(only))
        return "".join(lines), (frames[-1].lineno if frames else None), _exception_text(exc, only)
    except BaseException:
        return "%s: %s\n" % (type(exc).__name__, _exception_message(exc)), None, _exception_message(exc)


def _syntax_failure(exc):
    line = exc.lineno if isinstance(exc.lineno, int) else None
    column = exc.offset if isinstance(exc.offset, int) and exc.offset > 0 else None
    try:
        stack = "".join(traceback.format_exception_only(type(exc), exc))
    except BaseException:
        stack = None
    return _failure("syntax", type(exc).__name__, exc.msg if isinstance(exc.msg, str) else str(exc), stack, line, column)


def _exception_failure(exc):
    name = type(exc).__name__
    stack, line, message = _user_traceback(exc)
    # Every exception out of user code is ``runtime``: a SyntaxError from compile()/eval() inside it,
    # and a RecursionError, real or raised (they cannot be told apart from here, see the module doc).
    return _failure("runtime", name, message, stack, line)


def compile_user_code(code):
    """Returns (body, last_expression) code objects; last_expression is None when the code ends in a statement."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = ast.parse(code, USER_FILENAME, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
        last = compile(expr, USER_FILENAME, "eval", flags=flags, dont_inherit=True)
    body = compile(tree, USER_FILENAME, "exec", flags=flags, dont_inherit=True)
    return body, last


def _is_coroutine_code(code_obj):
    return code_obj is not None and bool(code_obj.co_flags & _CO_COROUTINE)


def _register_source(code):
    # So traceback lines show the user's source; the entry is overwritten by the next run.
    linecache.cache[USER_FILENAME] = (len(code), None, code.splitlines(True), USER_FILENAME)


def new_namespace():
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = __builtins__ if isinstance(__builtins__, dict) else __builtins__.__dict__
    return module.__dict__


def _flush_streams():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _prepare(code):
    """Compiles the user's code: returns (body, last) or a failure envelope."""
    _register_source(code)
    try:
        return compile_user_code(code)
    except SyntaxError as exc:
        return _syntax_failure(exc)
    except ValueError as exc:  # source with NUL bytes
        return _failure("syntax", type(exc).__name__, _exception_message(exc))
    except MemoryError as exc:
        return _exception_failure(exc)
    except RecursionError as exc:  # a deeply nested expression overflows the parser
        return _failure("syntax", type(exc).__name__, "the code is nested too deeply to parse")


def _show_results(exc, value):
    """The run's display items that come at its end: the last expression's rich repr (the main
    result), then the figures still open (wasmcell_display.py). Not after an interrupt or exit."""
    ordinary = exc is None or isinstance(exc, Exception)
    try:
        if exc is None and value is not None:
            _display.main_result(value)
        _display.finish(ordinary)
    except Exception:
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
    """The envelope for a finished run: exc is the exception it ended with, or None."""
    _flush_streams()
    _show_results(exc, value)
    return _display_breach(_envelope_of(exc, value, max_result_bytes))


def _envelope_of(exc, value, max_result_bytes):
    if exc is None:
        try:
            return _value_envelope(value, max_result_bytes)
        except BaseException as e:
            return _exception_failure(e)
    if isinstance(exc, SystemExit):
        if exc.code is None or exc.code == 0:
            return {"ok": True, "value": None, "valueKind": "none"}
        return _failure("runtime", "SystemExit", "the code called exit(%s)" % _safe_repr(exc.code, 200))
    return _exception_failure(exc)


async def run_async_envelope(code, namespace=None, limits=None):
    """Runs code (top-level await allowed) in a fresh namespace, or the one given (sessions keep state on
    purpose); returns the envelope dict. Code without top-level await runs synchronously, so the guest may
    drive its own event loop exactly as it would at a prompt."""
    prepared = _prepare(code)
    if isinstance(prepared, dict):
        return prepared
    body, last = prepared
    is_async = _is_coroutine_code(body) or _is_coroutine_code(last)
    if namespace is None:
        namespace = new_namespace()
    value, error = None, None
    try:
        result = eval(body, namespace)
        if _is_coroutine_code(body):
            await result
        if last is not None:
            value = eval(last, namespace)
            if _is_coroutine_code(last):
                value = await value
    except BaseException as exc:  # every guest failure becomes data
        error = exc
    finally:
        if is_async:
            _cancel_background_tasks()
    return _outcome(error, value, _max_result_bytes(limits))


def run_envelope(code, namespace=None, limits=None):
    """The synchronous entry point: top-level await gets its own event loop (``asyncio.run``)."""
    prepared = _prepare(code)
    if isinstance(prepared, dict):
        return prepared
    body, last = prepared
    if _is_coroutine_code(body) or _is_coroutine_code(last):
        import asyncio  # only here: see the module docstring

        return asyncio.run(run_async_envelope(code, namespace, limits))
    if namespace is None:
        namespace = new_namespace()
    value, error = None, None
    try:
        eval(body, namespace)
        if last is not None:
            value = eval(last, namespace)
    except BaseException as exc:  # every guest failure becomes data
        error = exc
    return _outcome(error, value, _max_result_bytes(limits))


def _cancel_background_tasks():
    """Best effort: tasks the run started and did not await do not outlive it. The host's reset (a new
    process, or a memory reset that drops the event loop's timers) is what guarantees it."""
    try:
        import asyncio  # already loaded: only async code gets here

        current = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not current:
                task.cancel()
    except BaseException:
        pass


def encode_envelope(envelope):
    try:
        return _json_dumps(envelope, ensure_ascii=False, allow_nan=False)
    except BaseException:
        return _json_dumps(_failure("runtime", "InternalError", "the result could not be encoded"))
