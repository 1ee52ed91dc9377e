import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import { bwrapArgs } from "../../src/jail/bwrap.ts";
import { jailArgv, sharedLibraries, spawnJailed } from "../../src/jail/index.ts";
import { isRoot } from "../../src/jail/host.ts";
import { collect, pythonSpec, runPython, TEST_SEAL } from "./helpers.ts";

describe("bwrap argv", () => {
  it("builds the exact command line", () => {
    const argv = bwrapArgs({
      program: "/usr/bin/python3",
      args: ["-I", "-c", "pass"],
      roBinds: [{ host: "/usr/bin/python3.11", jail: "/usr/bin/python3" }],
      symlinks: [{ target: "usr/lib", jail: "/lib" }],
      scratchDir: "/tmp",
      scratchBytes: 1048576,
      workDir: "/tmp/work",
      env: { HOME: "/tmp/work" },
      proc: false,
      seccompFd: 3,
    });
    assert.deepEqual(argv, [
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--clearenv",
      "--hostname",
      "sandbox",
      "--ro-bind",
      "/usr/bin/python3.11",
      "/usr/bin/python3",
      "--symlink",
      "usr/lib",
      "/lib",
      "--dev",
      "/dev",
      "--remount-ro",
      "/dev",
      "--size",
      "1048576",
      "--tmpfs",
      "/tmp",
      "--dir",
      "/tmp/work",
      "--remount-ro",
      "/",
      "--setenv",
      "HOME",
      "/tmp/work",
      "--chdir",
      "/tmp/work",
      "--seccomp",
      "3",
      "--",
      "/usr/bin/python3",
      "-I",
      "-c",
      "pass",
    ]);
  });

  it("chains the launcher (cgroup join, descriptor closing), prlimit, the uid drop and bwrap in that order; binds ldd's libraries", () => {
    const plan = { bubblewrap: true, seccomp: "kill" as const, uidDrop: { uid: 65534, gid: 65534 } };
    const argv = jailArgv(
      {
        executable: "/usr/bin/python3.11",
        args: ["-c", "1"],
        seccompProfile: "python-native",
        seal: TEST_SEAL,
        rlimits: { cpuSeconds: 2, fileSizeBytes: 1000 },
      },
      plan,
      ["/cg/memory/x/cgroup.procs"],
      { mechanism: "cgroup" },
    );
    const at = (s: string) => argv.indexOf(s);
    assert.deepEqual(argv.slice(0, 4), ["/bin/bash", "--norc", "--noprofile", "-c"]);
    // after the script: the descriptors to keep, then the cgroup.procs files
    assert.deepEqual(argv.slice(5, 9), ["wasmcell-jail", "0 1 2 3", "1", "/cg/memory/x/cgroup.procs"]);
    assert.ok(at("/usr/bin/prlimit") < at("/usr/bin/setpriv") && at("/usr/bin/setpriv") < at("/usr/bin/bwrap"));
    assert.deepEqual(argv.slice(at("/usr/bin/prlimit"), at("/usr/bin/setpriv")), [
      "/usr/bin/prlimit",
      "--core=0:0",
      "--nofile=64:64",
      "--cpu=2:2",
      "--fsize=1000:1000",
      "--",
    ]);
    assert.deepEqual(argv.slice(at("/usr/bin/setpriv"), at("/usr/bin/bwrap")), [
      "/usr/bin/setpriv",
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      "--no-new-privs",
      "--",
    ]);
    for (const lib of sharedLibraries("/usr/bin/python3.11")) assert.ok(argv.includes(lib), lib);
    assert.ok(argv.includes("/lib64/ld-linux-x86-64.so.2"));
  });
});

/** Python that prints the descriptors it holds (0…1023). */
const FD_PROBE =
  "import os\ndef ok(fd):\n    try:\n        os.fstat(fd)\n        return True\n    except OSError:\n        return False\nprint([fd for fd in range(1024) if ok(fd)])";

describe("inside the jail", () => {
  it("sees only its binds, an empty environment, hostname sandbox, a read-only root and a writable capped scratch", async () => {
    const code = `
import os, socket, json, errno
out = {"root": sorted(os.listdir("/")), "env": dict(os.environ), "host": socket.gethostname(), "cwd": os.getcwd(), "uid": os.getuid()}
try:
    open("/x", "w")
except OSError as e:
    out["write_root"] = errno.errorcode[e.errno]
with open("small", "wb") as f: f.write(b"x" * 1000)
try:
    with open("big", "wb") as f: f.write(b"x" * (3 << 20))
except OSError as e:
    out["write_big"] = errno.errorcode[e.errno]
print(json.dumps(out))`;
    const r = await runPython(code, { scratchMb: 2, workDir: "/tmp/work", env: { FOO: "bar" } });
    assert.equal(r.stderr, "");
    assert.deepEqual(JSON.parse(r.stdout), {
      root: ["dev", "etc", "lib", "lib64", "tmp", "usr"],
      env: {
        PATH: "/usr/bin:/bin",
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
        TZ: "UTC",
        HOME: "/tmp/work",
        FOO: "bar",
        PWD: "/tmp/work",
      },
      host: "sandbox",
      cwd: "/tmp/work",
      uid: 65534,
      write_root: "EROFS",
      write_big: "ENOSPC",
    });
    assert.notEqual(hostname(), "sandbox");
  });

  it("holds no descriptor but stdio and its extra pipes (the seccomp fd is consumed by bwrap)", async () => {
    const r = await runPython(FD_PROBE, { extraPipes: 2 });
    assert.equal(r.stdout, "[0, 1, 2, 4, 5]\n");
  });

  it("does not pass on descriptors the host process inherited without close-on-exec", async () => {
    // A host Node started with an extra open descriptor (fd 64, as a service manager or a shell might
    // leave one) spawns a jail: the program must not hold it.
    const helpers = new URL("./helpers.ts", import.meta.url).href;
    const script = `import { runPython } from ${JSON.stringify(helpers)};
const r = await runPython(${JSON.stringify(FD_PROBE)}, { extraPipes: 1 });
process.stdout.write(r.stdout);`;
    const child = spawn(
      "/bin/bash",
      ["--norc", "-c", 'exec 64</etc/hostname; exec "$0" --input-type=module -e "$1"', process.execPath, script],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    await new Promise((r) => child.once("close", r));
    assert.equal(out, "[0, 1, 2, 4]\n");
  });

  it("has no /proc unless asked, and then only its own pid namespace", async () => {
    const none = await runPython("import os; print(os.path.exists('/proc'))");
    assert.equal(none.stdout, "False\n");
    const own = await runPython("import os; print(sorted(p for p in os.listdir('/proc') if p.isdigit()))", {
      proc: true,
    });
    // pid 1 is bubblewrap's reaper, pid 2 the program
    assert.equal(own.stdout, "['1', '2']\n");
  });

  it(
    "runs as root without the uid drop only when asked (dropPrivileges: false)",
    { skip: !isRoot() && "needs root" },
    async () => {
      const r = await runPython("import os; print(os.getuid())", { seal: { ...TEST_SEAL, dropPrivileges: false } });
      assert.equal(r.stdout, "0\n");
    },
  );

  it("binds the executable's ldd libraries when no library directory is bound", async () => {
    const spec = pythonSpec("import sys; print(sys.version_info[0])", {
      roBinds: [{ host: "/usr/lib/python3.11", jail: "/usr/lib/python3.11" }],
      symlinks: [],
      bindSharedLibraries: true,
    });
    const r = await collect(await spawnJailed(spec));
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, "3\n");
  });
});
