// The working directory a program sees is the one `pwd` prints. A run's files sit in the engine's
// own directory (Pyodide's /home/pyodide, the native jail's /tmp/work, QuickJS's relative-only file
// map), which is not the workspace's path; so each program is started with a one-line prelude that
// presents the workspace path as its working directory:
//
// - Python: os.getcwd() (and so os.path.abspath, pathlib's cwd/resolve) returns the workspace path,
//   and a path under it given to open(), io.open, pathlib or os's file functions is mapped to the
//   engine's directory, so absolute paths built from the working directory reach the files. Only
//   the os-module functions are wrapped: a C library opening an absolute workspace path itself
//   (sqlite3.connect) does not see it; relative paths always work. The presentation is skipped when
//   the workspace path's top directory exists in the guest (a base directory such as /usr or /):
//   mapping it would take the guest's own files away.
// - JavaScript: a `process` object with cwd(), argv and env (the runtime has no process object).
//
// Nothing here is a boundary: the prelude runs as the guest's own code, inside the run's seal.

/** Python: defines and calls the setup, then deletes it; one line, so tracebacks shift by exactly one. */
export function pythonPrelude(argv: readonly string[], env: Record<string, string>, shown: string): string {
  // JSON strings, arrays and objects of strings are Python literals.
  const args = [argv, env, shown].map((v) => JSON.stringify(v)).join(", ");
  return `exec(${JSON.stringify(PY_SETUP)}); _w_setup(${args}); del _w_setup\n`;
}

const PY_SETUP = `
def _w_setup(argv, env, shown):
    import builtins, io, os, sys
    sys.argv = list(argv)
    os.environ.update(env)
    real = os.getcwd()
    if real == shown or os.path.lexists(shown):
        return
    base_getcwd = os.getcwd

    def getcwd():
        c = base_getcwd()
        if c == real:
            return shown
        if c.startswith(real + "/"):
            return shown.rstrip("/") + c[len(real):]
        return c

    def to_real(p):
        try:
            f = os.fspath(p)
        except TypeError:
            return p
        s, r, sep = (os.fsencode(shown), os.fsencode(real), b"/") if isinstance(f, bytes) else (shown, real, "/")
        if f == s:
            return r
        if f.startswith(s + sep):
            return r + f[len(s):]
        return p

    def first(f):
        def wrapped(*a, **k):
            if a:
                a = (to_real(a[0]),) + a[1:]
            return f(*a, **k)
        return wrapped

    def both(f):
        def wrapped(src, dst, *a, **k):
            return f(to_real(src), to_real(dst), *a, **k)
        return wrapped

    os.getcwd = getcwd
    os.getcwdb = lambda: os.fsencode(getcwd())
    for name in ("stat", "lstat", "listdir", "scandir", "mkdir", "rmdir", "remove", "unlink", "chdir",
                 "access", "utime", "chmod", "open", "readlink", "truncate"):
        if hasattr(os, name):
            setattr(os, name, first(getattr(os, name)))
    for name in ("rename", "replace", "link", "symlink"):
        if hasattr(os, name):
            setattr(os, name, both(getattr(os, name)))
    builtins.open = io.open = first(io.open)
`;

/** JavaScript: a `process` object, ahead of the code on its first line (so no line number moves). */
export function javascriptPrelude(argv: readonly string[], env: Record<string, string>, shown: string): string {
  return `const process = { cwd: () => ${JSON.stringify(shown)}, argv: ${JSON.stringify(argv)}, env: ${JSON.stringify(env)} }; `;
}
