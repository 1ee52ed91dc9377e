"""wasmcell's native-tier driver: runs inside the jail as ``python3 -I -u driver.py``.

It is the only file besides the shared harness (``harness.py``, bound next to it) that the jail runs.
Protocol, host → driver on stdin (one JSON object, then EOF):
    {"code": str, "maxResultBytes": int, "files": {relpath: base64}, "maxFiles": int, "limits": {...},
     "maxFileBytes": int, "softDeadline": float (epoch seconds; host and jail share the clock),
     "proxySocket": str (only for a run with network: the host proxy's unix socket, see bridge.py)}
driver → host on fd 4 (JSON lines): while the run goes, one {"display": {"data", "main"}} line per
    item it shows (wasmcell_display.py, bound beside the harness); last, {"envelope": <harness
    envelope>, "files": [{"path", "data"}], "maxrss": int}
Guest stdout/stderr are fds 1/2 (moved onto the host's fds 5/6 first; unbuffered, ``-u``), so what a
run printed before a hard kill is not lost. Everything here runs in the guest's own process: a guest can tamper with this driver, and
then only lies about its own result. The host treats fd 4 as untrusted data and caps it.

Why the soft timer: SIGALRM raises KeyboardInterrupt between bytecodes, so a pure-Python loop ends with
a ``timeout`` envelope, its traceback and its output. Code stuck in C (a sleep, a regex, numpy) does
not see it; the host's SIGKILL at the deadline is the real limit.
"""

import os

if __name__ == "__main__":
    # Guest stdout/stderr go to pipes only this process holds (fds 5 and 6), not to the jail's stdio,
    # which bubblewrap's own processes keep open until the namespaces are torn down: the host sees the
    # end of the output the moment this process exits. Done before anything else can write. (The warm
    # parent, parent.py, imports this module instead and moves each child's fds itself.)
    os.dup2(5, 1)
    os.dup2(6, 2)
    os.close(5)
    os.close(6)

import base64  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

_here = os.path.dirname(os.path.abspath(__file__))
# The harness's and the display module's paths are the arguments: in the jail they are bound beside
# this file; run unjailed (seal.bubblewrap off) they are wherever the host has them, or staged copies
# (each in a directory of its own) when a 0700 parent hides them from the dropped uid. The source
# tree's ../python is the fallback for a driver started by hand.
_harness_dirs = [os.path.dirname(a) for a in sys.argv[1:3]]
sys.path[:0] = [*_harness_dirs, _here, os.path.join(os.path.dirname(_here), "python")]
import harness  # noqa: E402
import binascii  # noqa: E402
import resource  # noqa: E402
from stat import S_ISREG as _S_ISREG  # noqa: E402

# Bound before the guest's code runs (it runs in this process and can rebind any builtin or module
# attribute): what main() uses after the run is held here, C functions as objects, so a run that
# rebinds `os.write`, `builtins.len` or `json.dumps` still gets its result and files back.
_int, _len, _open, _sorted, _memoryview, _KeyboardInterrupt, _OSError = int, len, open, sorted, memoryview, KeyboardInterrupt, OSError
_getcwd, _chdir, _scandir, _lstat, _write, _exit = os.getcwd, os.chdir, os.scandir, os.lstat, os.write, os._exit
_setitimer, _ITIMER_REAL, _getrusage, _RUSAGE_SELF = signal.setitimer, signal.ITIMER_REAL, resource.getrusage, resource.RUSAGE_SELF
_b2a_base64, _to_json, _flush_streams, _output_limit = binascii.b2a_base64, harness.to_json, harness._flush_streams, harness.output_limit

# The package library (wasmcell setup), read-only: ahead of Debian's dist-packages, so an import finds
# the version the lock pins (the same files the Pyodide tier mounts), behind the standard library.
_packages = os.environ.pop("WASMCELL_PACKAGES", "")
if _packages:
    _at = next((i for i, p in enumerate(sys.path) if p.endswith("dist-packages")), len(sys.path))
    sys.path.insert(_at, _packages)

RESULT_FD = 4


def _on_alarm(signum, frame):
    raise KeyboardInterrupt()


def _write_inputs(files):
    """Writes input files into the working directory; returns {path: bytes} to tell changes later."""
    written = {}
    for rel, b64 in files.items():
        data = base64.b64decode(b64)
        parent = os.path.dirname(rel)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(rel, "wb") as f:
            f.write(data)
        written[rel] = data
    return written


def _collect_outputs(inputs, max_files, max_bytes, workdir, before=None):
    """Files under workdir (the run's working directory, absolute: the guest may have chdir'd away)
    that are new or changed, as (list, (cap, why)-or-None), in os.walk's order (a loop, not recursion:
    the guest chooses the depth). Symlinks and special files are skipped: only regular files' bytes
    come back. `before`: what the directory held before the run (a session's earlier turns), left out
    unless the run changed it."""
    before = before or {}
    out, total, todo = [], 0, [""]
    while todo:
        rel = todo.pop()
        try:
            with _scandir(workdir + "/" + rel if rel else workdir) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except _OSError:
            continue
        for name in _sorted([n for n, is_dir in listed if not is_dir]):
            path = rel + "/" + name if rel else name
            full = workdir + "/" + path
            try:
                st = _lstat(full)
            except _OSError:
                continue
            if not _S_ISREG(st.st_mode):
                continue
            if path not in inputs and before.get(path) == (st.st_size, st.st_mtime_ns):
                continue
            if path in inputs and st.st_size == _len(inputs[path]):
                with _open(full, "rb") as f:
                    if f.read() == inputs[path]:
                        continue
            if _len(out) + 1 > max_files:
                return out, ("maxFiles", "the run wrote more than %d files" % max_files)
            total += st.st_size
            if total > max_bytes:
                return out, ("maxFileBytes", "the files the run wrote hold more than %d bytes" % max_bytes)
            with _open(full, "rb") as f:
                out.append({"path": path, "data": _b2a_base64(f.read(), newline=False).decode("ascii")})
        todo.extend(rel + "/" + n if rel else n for n in _sorted([n for n, is_dir in listed if is_dir], reverse=True))
    return out, None


def _write_result_fd(data):
    view = _memoryview(data)
    while view:
        view = view[_write(RESULT_FD, view):]


def _start_display(limits):
    """The display hook: each item the run shows goes to the host as a line of its own, at once."""
    import wasmcell_display

    wasmcell_display.configure(lambda item: _write_result_fd(('{"display":%s}\n' % item).encode("utf-8", "surrogatepass")), limits)


def _start_network(unix_path):
    """A run with network: the bridge (bridge.py) on 127.0.0.1 and the proxy variables every HTTP
    client reads. NO_PROXY is set empty so nothing bypasses the proxy (bypassing would only reach
    nothing: the namespace has no route out). Changing these variables cannot widen anything either."""
    import bridge

    proxy = "http://127.0.0.1:%d" % bridge.start(unix_path)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        os.environ[name] = proxy
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        os.environ[name] = ""


_network_started = False


def _listing():
    """(size, mtime) of every regular file under the working directory: what a session's earlier turns
    left, so a turn returns only the files it wrote or changed."""
    seen = {}
    for root, _dirs, names in os.walk(".", followlinks=False):
        for name in names:
            path = os.path.join(root, name)[2:]
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen[path] = (st.st_size, st.st_mtime_ns)
    return seen


def run(request, namespace=None):
    """One run: the per-run entry point. The cold path (main) and the warm parent's children
    (parent.py) both call it, once per run (a session's child once per turn, with its namespace).
    Writes the result line to fd 4; the caller leaves afterwards (or waits for the next turn)."""
    global _network_started
    workdir = _getcwd()  # the run's working directory, before the guest can chdir
    before = _listing() if namespace is not None else {}
    inputs = _write_inputs(request.get("files") or {})
    if request.get("proxySocket") and not _network_started:
        _start_network(str(request["proxySocket"]))
        _network_started = True
    _start_display(request.get("limits") or {})
    deadline = request.get("softDeadline")
    if deadline:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, float(deadline) - time.time()))
    try:
        envelope = harness.run_envelope(request["code"], namespace, {"maxResultBytes": _int(request["maxResultBytes"])})
    except _KeyboardInterrupt:  # the alarm fired between the harness's own steps
        envelope = harness._failure("runtime", "KeyboardInterrupt", "")
    finally:
        _setitimer(_ITIMER_REAL, 0)
    try:
        _chdir(workdir)  # the inputs' relative paths and the files' are the working directory's
    except _OSError:  # the guest removed it: its files are gone with it
        pass
    files, problem = _collect_outputs(inputs, _int(request["maxFiles"]), _int(request["maxFileBytes"]), workdir, before)
    if problem and envelope.get("ok"):
        envelope = _output_limit(problem[0], problem[1])
    _flush_streams()

    # Peak resident memory of this process (the host prefers the cgroup's figure, which counts the tmpfs).
    maxrss = _getrusage(_RUSAGE_SELF).ru_maxrss * 1024
    _write_result_fd((_to_json({"envelope": envelope, "files": files, "maxrss": maxrss}) + "\n").encode("utf-8"))


def main():
    run(json.loads(sys.stdin.buffer.read().decode("utf-8")))
    # The run is over: leave now. No interpreter finalization (~20 ms of module teardown), and no
    # waiting for threads the guest left running; stdio were flushed above and are unbuffered.
    _exit(0)


if __name__ == "__main__":
    main()
