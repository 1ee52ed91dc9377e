"""wasmcell's warm parent: runs inside the native jail as ``python3 -I -u parent.py harness.py``.

It imports the stack once (``python.preload``: numpy, pandas, matplotlib with the display module as its backend by default, plus the
driver and the harness), pays what their first use costs (a figure drawn and saved, a CSV with dates read, a frame grouped, plotted
and shown as HTML), and then only makes children: it never runs guest code.
Each run is a copy-on-write child of it, made in one fork:

    parent (pid 1 of a PID namespace of its own) ──unshare(PID for children)──fork──▶ child (pid 1 of
    its own PID namespace) ──unshare(mount, IPC, UTS[, net])

One process per run, not a fork that unshares and forks again (a PID namespace takes only the
caller's next children): a fork of the warm parent copies its page tables and an exit tears them
down (about 4 and 5 ms each for its ~90 MB, measured), so a second process per run doubled what
every run paid.
The child, before its request arrives (so off the run's path): puts a fresh tmpfs on /tmp (its scratch,
in its own mount namespace: no sibling and not the parent can see it), sets its own rlimits, brings up
its loopback (network runs only: its network namespace is its own, so abstract sockets and ports are
too), reseeds ``random``, drops every capability, sets no_new_privs and installs the child filter the
host compiled (src/jail/profiles-warm.ts) on top of the parent's. Then it waits for its request, sets
the run's rlimits, calls ``driver.run`` — the one per-run entry point — and leaves.

Protocol. Host → parent on stdin: a config line ``{"preload": [...], "childFilter": base64,
"network": bool, "scratchBytes": int}``, then request lines ``<id> <r|s> <json>`` (the driver's
request plus ``setup``: cpuSeconds, fileSizeBytes, addressSpaceBytes), forwarded to child ``<id>`` through a
pipe of its own (a line for another id is dropped). ``r``: a stateless run, the pipe is closed after
it. ``s``: a session's turn; the child serves turns until it ends, and then the parent leaves too. Parent → host on fd 7:
``hello <json>`` once warm, ``ready <id> <pid in the parent's namespace>`` when a child waits for its request,
``exit <id> <status> <token>`` when it is gone. Before ``exit`` the parent writes a fence (a NUL, ESC,
``wasmcell-fence:`` and the token, a fresh random value the dead child never knew) on the child's
pipe set (fds 4, 5, 6 for even ids, 8, 9, 10 for odd ones: every other child writes on the same
set): the host takes what precedes it as that child's, and nothing the child wrote can pass for the
end of its output. Every run also ends with a fence of its own token (the request's ``fence``),
written by the child after its result, so the host answers without waiting for the child's teardown
(it then kills the child; the next run may start at once in the child made ahead on the other set,
and the child after that is made only once the parent's fence for this one is through). A session
child reads a line per turn and ends each turn that way. A guest that forges its own token only cuts
its own output short.

Before a child is made on a pipe set the parent checks the last one there left nothing: the child
reaped (it is pid 1 of its namespace, so with it gone every process in there is gone, and every
thread, and the namespaces holding its scratch, IPC objects and sockets) and no process of the
parent's other than its live children left to reap. Anything else and the parent exits, so the host
retires it and starts another. Two children are alive at once at most (one dying, one serving or
waiting), each in namespaces of its own, as a session's child and a stateless one always could be.
"""

import os
import sys

CONTROL_FD = 7
# Two sets of (result, stdout, stderr) pipes to the host; child n writes on set n % 2 only. A child
# is made on a set once the last child that wrote there is gone and fenced, so one child's teardown
# (its address space unmapped: milliseconds) overlaps the next child's run on the other set, and
# nothing the dying one still had in flight can land in the next one's output.
PIPE_SETS = ((4, 5, 6), (8, 9, 10))
RESULT_FD = 4  # where a child's result goes (the driver's RESULT_FD), whichever set it writes on
FENCE = b"\x00\x1bwasmcell-fence:"

import ctypes  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV = 0x2, 0x4
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SYS_CAPSET = 126


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def _control(line):
    os.write(CONTROL_FD, (line + "\n").encode("ascii"))


def _write_all(fd, data):
    view = _memoryview(data)
    while view:
        view = view[_os_write(fd, view):]


def _preload(names):
    """Imports the stack and pays what first use costs, once, here.

    What a data agent's code does first (read a CSV with dates, group, sort, plot a frame, save a PNG,
    show a frame as a table) loads more modules and fills more caches than the imports do: pandas'
    plotting backend and date parser, matplotlib's text layout, font and PNG writer. Paid here, a
    child starts with them; each of its own first uses would otherwise cost every run again (a CSV +
    group + bar chart + savefig run took about 25 ms longer, measured). Our own code, no guest input:
    every child starts from the same state.
    """
    import importlib

    for name in names:
        importlib.import_module(name)
    if "matplotlib" in names:
        import io

        import matplotlib

        # The display module is the backend (it draws with Agg and turns plt.show() and figures left
        # open into display items): chosen here, as the jail's MPLBACKEND says, before pyplot loads.
        matplotlib.use("module://wasmcell_display")
        import matplotlib.pyplot as plt

        fig, (ax, bx) = plt.subplots(1, 2, figsize=(6, 4))
        ax.plot([0, 1, 2], [1, 0, 2], label="line")
        ax.scatter([0, 1], [1, 0])
        ax.bar(["a", "b"], [1, 2])
        bx.hist([0, 1, 1, 2, 3], bins=3)
        ax.set_title("warm")
        ax.set_xlabel("x")
        ax.legend()
        fig.tight_layout()
        fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
    if "pandas" in names:
        import io

        import pandas

        df = pandas.read_csv(io.StringIO("day,k,v\n2024-01-02,a,1.5\n2024-02-03,b,2\n"), parse_dates=["day"])
        df["w"] = df.v * 2
        by = df.groupby("k").w.sum().sort_values()
        df.groupby("k").agg({"v": ["mean", "max"]})
        df.describe()
        df.merge(df, on="k")
        df.to_html()
        df._repr_html_()
        repr(df)
        if "matplotlib" in names:
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots()
            by.plot.bar(ax=ax)
            df.plot(x="day", y="v", ax=ax)
            fig.savefig(io.BytesIO(), format="png")
            plt.close(fig)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class _Prepared:
    """What every child's setup passes to the kernel, built once in the parent: a child only makes
    the calls (building ctypes types and buffers in each child cost it ~200 page faults)."""

    def __init__(self, program):
        self.filter_buf = ctypes.create_string_buffer(program, len(program)) if program else None
        self.fprog = (
            _SockFprog(len(program) // 8, ctypes.cast(self.filter_buf, ctypes.c_void_p)) if program else None
        )
        self.cap_header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
        self.cap_data = (_CapData * 2)()  # all zero: no capability left


def _loopback_up():
    """A new network namespace's `lo` is down: the bridge listens on 127.0.0.1 there."""
    import fcntl
    import socket
    import struct

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
        ifr = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
    finally:
        s.close()


def _drop_capabilities(prepared):
    _check(_libc.syscall(SYS_CAPSET, ctypes.byref(prepared.cap_header), ctypes.byref(prepared.cap_data)), "capset")


def _setup(config):
    """The child's own world, before its request and any guest code (see the module's docstring)."""
    import random

    # No --make-rprivate first: the jail's mounts are all private (bubblewrap makes them so), and this
    # mount namespace, owned by the parent's user namespace, is less privileged than the jail's it was
    # copied from, so even a shared mount there would be a slave here: what is mounted here propagates
    # nowhere (test/security/native-sibling-state.test.ts reads its parents' mount tables from the host).
    # Sized for the sandbox's default file caps (a run with larger ones gets a cold jail); the memory
    # cgroup counts its pages against the child either way.
    opts = ("size=%d,mode=0700" % int(config["scratchBytes"])).encode("ascii")
    _check(_libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount tmpfs /tmp")
    work = os.environ.get("HOME", "/tmp/work")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    if config.get("network"):
        _loopback_up()
    # Every child starts from the parent's memory: draw fresh seeds, or siblings would share sequences.
    random.seed()
    np = sys.modules.get("numpy")
    if np is not None:
        # numpy's global generator from 624 fresh words (np.random.seed() costs a child ~100 more
        # page faults for the same: a state no sibling shares).
        key = np.frombuffer(os.urandom(624 * 4), dtype=np.uint32)
        np.random.set_state(("MT19937", key, 624))
    prepared = config["prepared"]
    _drop_capabilities(prepared)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if prepared.fprog is not None:  # no filter: seal.seccomp is off
        _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prepared.fprog), 0, 0), "seccomp")
    # Copy now, off the run's path, the pages a run's harness and result writing touch (their
    # reference counts change, so the first touch copies them): our own code, no guest input. The
    # same for the rest of a run's path: reading the request, the rlimits, the alarm, the display
    # hook, the scan for the files a run wrote.
    import harness
    import resource
    import signal

    import driver

    json.dumps(harness.run_envelope("None", None, {"maxResultBytes": 1024}))
    json.loads('{"code": "", "setup": {"cpuSeconds": 1}, "files": {}, "limits": {}}')
    resource.getrlimit(resource.RLIMIT_CPU)
    signal.signal(signal.SIGALRM, signal.getsignal(signal.SIGALRM))
    signal.setitimer(signal.ITIMER_REAL, 0)
    driver._start_display({})
    driver._collect_outputs({}, 1, 1, os.getcwd())


def _limit(setup):
    """The run's own rlimits (lowering only: the parent's are the ceiling)."""
    import resource

    limits = [
        (resource.RLIMIT_FSIZE, setup.get("fileSizeBytes")),
        (resource.RLIMIT_AS, setup.get("addressSpaceBytes")),
        (resource.RLIMIT_CPU, setup.get("cpuSeconds")),
        (resource.RLIMIT_NOFILE, 256),
    ]
    for which, value in limits:
        if value:
            resource.setrlimit(which, (int(value), int(value)))


# What a child uses after guest code ran (the run's fence, a session's next request), bound here, in
# the parent, before any guest code: a run that rebinds `str`, `os.write` or `json.loads` still ends
# with its own fence, and a session's next turn is still read (harness.loads is the harness's own).
_str, _memoryview, _os_read, _os_write, _os_exit = str, memoryview, os.read, os.write, os._exit


def _read_line(fd, buf):
    """One line from `fd` (without the newline) and what followed it, or (None, b"") at EOF."""
    while b"\n" not in buf:
        chunk = _os_read(fd, 1 << 20)
        if not chunk:
            return None, b""
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line, rest


# Where a child says why its setup failed: the parent's stderr (the jail's log, which the host keeps
# for a crash message), never its pipe set: it is made while the last child on that set may still be
# writing there, and it may write there only once that one is fenced and its own request has come.
SETUP_LOG_FD = 5
_setup_log = 2


def _child(request_fd, config, pipes):
    global _setup_log
    import driver  # preloaded in the parent: no import cost here

    # Only its own set's pipes (result, stdout, stderr), the request pipe and, for its setup, the
    # log stay open.
    log = os.dup(2)
    result_fd, stdout_fd, stderr_fd = pipes
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    os.dup2(result_fd, RESULT_FD)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(request_fd, 3)
    request_fd = 3
    os.dup2(log, SETUP_LOG_FD)
    _setup_log = SETUP_LOG_FD
    os.closerange(SETUP_LOG_FD + 1, 1 << 16)
    _setup(config)
    os.close(SETUP_LOG_FD)
    _setup_log = 2
    line, rest = _read_line(request_fd, b"")
    if line is None:
        os._exit(0)
    request = json.loads(line)
    _limit(request["setup"])
    if not request.get("session"):
        driver.run(request)
        _end_turn(request)
        _os_exit(0)
    import harness

    namespace = harness.new_namespace()
    while True:
        driver.run(request, namespace)
        _end_turn(request)
        line, rest = _read_line(request_fd, rest)
        if line is None:
            _os_exit(0)
        request = harness.loads(line.decode("utf-8"))


def _end_turn(request):
    """The run's own fence (the request's token) after its output and result: the host may answer at
    once, before this process is gone. The guest knows this token, so forging it only cuts its own
    output short; the parent's fence after the child is gone is what the next run relies on."""
    token = _str(request.get("fence", "")).encode("ascii")
    for fd in (1, 2, RESULT_FD):
        _write_all(fd, FENCE + token + b"\n")


def _own_pid_namespace():
    """Makes this process pid 1 of a PID namespace of its own; the process that called it only waits.

    The jail's own PID namespace belongs to a user namespace above the one the parent holds its
    capabilities in (bubblewrap's --disable-userns nests one), so the parent could not setns back
    into it (see _fork_into_pid_ns). A namespace made here belongs to the parent's: it may.
    """
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    pid = os.fork()
    if pid == 0:
        return
    # The waiter holds nothing of the parent's (no pipe, no stdin) and leaves with it.
    os.closerange(0, 1 << 16)
    _, status = os.waitpid(pid, 0)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


_own_pid_ns = None


def _fork_into_pid_ns():
    """os.fork, the child as pid 1 of a PID namespace of its own.

    unshare(CLONE_NEWPID) moves only the caller's next children into a new namespace, and may be asked
    again only once the caller's "namespace for children" is its own again: so unshare, fork, setns
    back (through a pidfd of the parent's own: the jail has no /proc). A fork through glibc and
    Python, so their at-fork steps run (locks, thread state, random's reseed, libraries' handlers).
    """
    global _own_pid_ns
    if _own_pid_ns is None:
        _own_pid_ns = os.pidfd_open(os.getpid())
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    try:
        pid = os.fork()
    except BaseException:  # no child (pids.max, say): back to our own namespace for the next try
        _check(_libc.setns(_own_pid_ns, CLONE_NEWPID), "setns(CLONE_NEWPID)")
        raise
    if pid != 0:
        _check(_libc.setns(_own_pid_ns, CLONE_NEWPID), "setns(CLONE_NEWPID)")
    return pid


def _spawn(n, config):
    """A child in namespaces of its own (see the module's docstring); returns its pid and request pipe."""
    request_r, request_w = os.pipe()
    flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS
    if config.get("network"):
        flags |= CLONE_NEWNET
    pipes = PIPE_SETS[n % 2]
    pid = _fork_into_pid_ns()
    if pid == 0:
        try:
            os.close(request_w)
            _check(_libc.unshare(flags), "unshare")
            _child(request_r, config, pipes)
        except BaseException as exc:  # the child could not be set up, or its run could not start
            try:
                os.write(_setup_log, ("wasmcell child setup: %r\n" % (exc,)).encode())
            finally:
                os._exit(70)
        os._exit(0)
    os.close(request_r)
    _control("ready %d %d" % (n, pid))
    return pid, request_w


def _prove_empty(live):
    """No process of the parent's but the live children it holds: nothing else to reap, nothing else
    running (a zombie that is one of them is reaped through its pidfd next)."""
    try:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return not live
    return info is None or info.si_pid in {c.pid for c in live}


def main():
    import base64

    _own_pid_namespace()
    line, pending = _read_line(0, b"")
    config = json.loads(line)
    config["prepared"] = _Prepared(base64.b64decode(config.pop("childFilter")))
    # -I leaves the script's directory off sys.path: the driver (and bridge) are bound beside this file.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import driver  # noqa: F401  (the driver and the harness, with the package library on sys.path)

    try:
        import wasmcell_display  # noqa: F401  (the display hook the driver loads per run)
    except ImportError:
        pass

    if config.get("network"):
        import bridge  # noqa: F401
    import random  # noqa: F401  (each child reseeds it in its setup: imported here, not once per child)

    _preload(list(config.get("preload") or []))
    import gc

    # The preloaded objects never change again: out of the collector's generations, a child's
    # collections do not touch (and so do not copy) the pages they live on.
    gc.collect()
    gc.freeze()
    # The standard library's top-level names and the modules this parent holds: the host sends a run
    # that imports only the standard library to a parent without the stack, unless the stack's parent
    # holds a module it imports that the light one does not (src/engines/native/route.ts).
    hello = {"pid": os.getpid(), "modules": len(sys.modules), "stdlib": sorted(sys.stdlib_module_names)}
    hello["loaded"] = sorted(
        name for name in sys.modules if len(name) <= 200 and name.isascii() and all(p.isidentifier() for p in name.split("."))
    )
    _control("hello " + json.dumps(hello))

    # The children alive (not yet reaped), by id: at most one waits for its request (made ahead, so
    # the next run finds it ready), one serves, one is being torn down. A child waiting for its
    # request writes nothing; the host gives it its request only once the last child on its pipe
    # set is fenced (see PIPE_SETS).
    children = {}
    next_id = 1
    session = None  # the id of a session's child: the parent then makes no other, and leaves with it

    def refill():
        nonlocal next_id
        if session is not None or any(c.request_w >= 0 for c in children.values()):
            return
        children[next_id] = _Child(next_id, config)
        next_id += 1

    refill()
    while True:
        pidfds = {c.pidfd: c for c in children.values()}
        readable, _, _ = select.select([0, *pidfds], [], [])
        ended = [pidfds[fd] for fd in readable if fd in pidfds]
        for child in ended:
            del children[child.id]
            code = child.reap()
            token = os.urandom(16).hex().encode("ascii")
            for fd in PIPE_SETS[child.id % 2]:
                _write_all(fd, FENCE + token + b"\n")
            _control("exit %d %d %s" % (child.id, code, token.decode("ascii")))
            if child.id == session or not _prove_empty(list(children.values())):
                os._exit(0)
        if ended:
            refill()
        if 0 not in readable:
            continue
        chunk = os.read(0, 1 << 20)
        if not chunk:  # the host is gone
            os._exit(0)
        pending += chunk
        while b"\n" in pending:
            req, _, pending = pending.partition(b"\n")
            head, _, rest = req.partition(b" ")
            mode, _, body = rest.partition(b" ")
            child = children.get(int(head)) if head.isdigit() and len(head) < 10 else None
            if child is None or child.request_w < 0:
                continue
            if mode == b"s" and session is None:
                session = child.id
            try:
                _write_all(child.request_w, body + b"\n")
            except OSError:  # the child is gone; its exit is on the way
                pass
            if child.id != session:
                child.close_request()
        refill()


class _Child:
    """A child (see _spawn), as the parent holds it."""

    def __init__(self, n, config):
        self.id = n
        self.pid, self.request_w = _spawn(n, config)
        self.pidfd = os.pidfd_open(self.pid)

    def close_request(self):
        if self.request_w >= 0:
            os.close(self.request_w)
            self.request_w = -1

    def reap(self):
        """Its status as the host reads it: the exit code, or 128 + the signal that ended it."""
        _, status = os.waitpid(self.pid, 0)
        os.close(self.pidfd)
        self.close_request()
        return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    main()
