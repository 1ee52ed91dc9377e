// What Debian's python3 with numpy, pandas and matplotlib needs to see in the jail, read-only, and
// nothing else (docs/seal.md, "The native tier's binds" and pitfall 12). Measured with the
// KILL-default filter and the workloads in test/engines/native/: each entry below is there because a
// workload failed without it.

import { existsSync, realpathSync } from "node:fs";
import { basename } from "node:path";
import type { Bind, JailSpec } from "../../jail/index.ts";
import type { ResolvedSeal } from "../../options/index.ts";

export interface PythonLayout {
  /** Host interpreter binary (resolved: /usr/bin/python3 → /usr/bin/python3.11). */
  executable: string;
  binds: Bind[];
  symlinks: { target: string; jail: string }[];
}

/** The jail's view of a Debian python3 at `python` (default /usr/bin/python3). */
export function pythonLayout(python: string): PythonLayout {
  const executable = realpathSync(python);
  const version = /^python(3\.\d+)$/.exec(basename(executable))?.[1];
  if (!version) throw new Error(`${python} resolves to ${executable}, which is not a python3.N binary`);
  const candidates = [
    `/usr/lib/python${version}`, // the standard library (lib-dynload included)
    "/usr/lib/python3/dist-packages", // Debian's numpy, pandas, matplotlib, pytz, dateutil, …
    "/usr/lib/x86_64-linux-gnu", // shared libraries, including what numpy/matplotlib dlopen (OpenBLAS, libpng, freetype)
    "/usr/lib64", // the ELF interpreter's canonical path
    "/etc/ld.so.cache", // library lookup for dlopen
    "/etc/alternatives", // libblas.so.3 / liblapack.so.3 go through it
    "/usr/share/zoneinfo", // pandas/pytz: tzdata.zi; zoneinfo.ZoneInfo
    "/usr/lib/locale", // locale.setlocale(LC_ALL, "C.UTF-8") (glibc's compiled locales, read-only)
    "/usr/share/matplotlib", // matplotlib's mpl-data (fonts, style sheets) on Debian
    "/etc/matplotlibrc", // Debian's matplotlib reads its rc file here
  ];
  const binds: Bind[] = candidates.filter((p) => existsSync(p)).map((p) => ({ host: p, jail: p }));
  // Debian merges /lib into /usr/lib: the interpreter path in every ELF file is /lib64/ld-linux-x86-64.so.2.
  const symlinks = [
    { target: "usr/lib", jail: "/lib" },
    { target: "usr/lib64", jail: "/lib64" },
  ];
  return { executable, binds, symlinks };
}

/** The jail spec every python3 run shares: the interpreter at /usr/bin/python3, its binds, the python-native filter. */
export function pythonJailSpec(layout: PythonLayout, args: readonly string[], seal: ResolvedSeal): JailSpec {
  return {
    executable: layout.executable,
    jailExecutable: "/usr/bin/python3",
    args,
    roBinds: layout.binds,
    symlinks: layout.symlinks,
    bindSharedLibraries: false,
    seccompProfile: "python-native",
    seal,
  };
}
