// Maintainer tool: writes packages.lock.json from the Debian archive this machine's apt points at.
//   node scripts/lock-packages.ts            re-pin every package in PACKAGES to apt's candidate version
// It downloads each .deb (apt-get download, no root changes), checks it against the sha256 in the
// archive's Packages index, unpacks it and records the tree hash of what goes into the library.
// To add a package: add a line below, run this, run `wasmcell setup`, add a smoke test to
// test/library/packages.test.ts, and commit the lock with the test.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchDebs, unpackDeb } from "../src/library/deb.ts";
import { DEFAULT_LOCK_PATH, debFileName, parseLock, type Lock, type LockedPackage } from "../src/library/lock.ts";
import { sha256File } from "../src/library/tree.ts";

// [Debian package, distribution name, imports, preload into the snapshot]
const PACKAGES: [string, string, string[], boolean][] = [
  ["python3-requests", "requests", ["requests"], true],
  ["python3-urllib3", "urllib3", ["urllib3"], true],
  ["python3-idna", "idna", ["idna"], true],
  ["python3-certifi", "certifi", ["certifi"], true],
  ["python3-charset-normalizer", "charset-normalizer", ["charset_normalizer"], true],
  ["python3-chardet", "chardet", ["chardet"], false],
  ["python3-bs4", "beautifulsoup4", ["bs4"], true],
  ["python3-soupsieve", "soupsieve", ["soupsieve"], true],
  ["python3-html5lib", "html5lib", ["html5lib"], false],
  ["python3-webencodings", "webencodings", ["webencodings"], false],
  ["python3-yaml", "PyYAML", ["yaml"], true],
  ["python3-jinja2", "Jinja2", ["jinja2"], true],
  ["python3-markupsafe", "MarkupSafe", ["markupsafe"], true],
  ["python3-dateutil", "python-dateutil", ["dateutil", "dateutil.parser", "dateutil.relativedelta"], true],
  ["python3-six", "six", ["six"], true],
  ["python3-tabulate", "tabulate", ["tabulate"], true],
  ["python3-sympy", "sympy", ["sympy"], false],
  ["python3-mpmath", "mpmath", ["mpmath"], false],
  ["python3-networkx", "networkx", ["networkx"], false],
  ["python3-openpyxl", "openpyxl", ["openpyxl"], false],
  ["python3-et-xmlfile", "et-xmlfile", ["et_xmlfile"], false],
  ["python3-attr", "attrs", ["attr", "attrs"], false],
  ["python3-packaging", "packaging", ["packaging", "packaging.version"], false],
  ["python3-more-itertools", "more-itertools", ["more_itertools"], false],
  ["python3-tomli", "tomli", ["tomli"], false],
  ["python3-toml", "toml", ["toml"], false],
  ["python3-pyparsing", "pyparsing", ["pyparsing"], false],
  ["python3-markdown", "Markdown", ["markdown"], false],
  ["python3-pygments", "Pygments", ["pygments"], false],
];

function aptField(record: string, field: string): string {
  const m = new RegExp(`^${field}: (.+)$`, "m").exec(record);
  if (!m?.[1]) throw new Error(`apt-cache record has no ${field}`);
  return m[1].trim();
}

function candidate(pkg: string): { version: string; architecture: string; filename: string; sha256: string } {
  const policy = execFileSync("apt-cache", ["policy", pkg], { encoding: "utf8" });
  const version = /Candidate: (\S+)/.exec(policy)?.[1];
  if (!version || version === "(none)") throw new Error(`${pkg} has no candidate version in apt`);
  const record = execFileSync("apt-cache", ["show", `${pkg}=${version}`], { encoding: "utf8" }).split("\n\n")[0]!;
  return {
    version,
    architecture: aptField(record, "Architecture"),
    filename: aptField(record, "Filename"),
    sha256: aptField(record, "SHA256"),
  };
}

/** The upstream version from the package's metadata (dist-info METADATA or egg-info PKG-INFO). */
function upstreamVersion(files: { path: string }[], dir: string, name: string): string {
  const norm = (s: string) => s.toLowerCase().replace(/[-_.]+/g, "_");
  for (const f of files) {
    const m = /^([^/]+?)-([^/-]+?)\.(dist-info\/METADATA|egg-info\/PKG-INFO|egg-info)$/.exec(f.path);
    if (!m || norm(m[1]!) !== norm(name)) continue;
    const text = readFileSync(join(dir, f.path), "utf8");
    return /^Version: (.+)$/m.exec(text)?.[1]?.trim() ?? m[2]!;
  }
  throw new Error(`no metadata for ${name}`);
}

const work = mkdtempSync(join(tmpdir(), "wasmcell-lock-"));
try {
  const locked: LockedPackage[] = [];
  for (const [debian, name, imports, preload] of PACKAGES) {
    const c = candidate(debian);
    if (c.architecture !== "all" && c.architecture !== "amd64") throw new Error(`${debian}: ${c.architecture}`);
    const p: LockedPackage = {
      name,
      version: "",
      imports,
      preload,
      source: { debian, version: c.version, architecture: c.architecture, filename: c.filename, sha256: c.sha256 },
      installedSha256: "0".repeat(64),
    };
    await fetchDebs([p], work);
    const deb = join(work, debFileName(p));
    if (sha256File(deb) !== c.sha256) throw new Error(`${debian}: downloaded file does not match the Packages index`);
    const unpacked = await unpackDeb(deb, "usr/lib/python3/dist-packages", work);
    p.version = upstreamVersion(unpacked.entries, unpacked.dir, name);
    // Debian's mpmath metadata says 0.0.0: the upstream part of the Debian version is the truth then.
    if (p.version === "0.0.0") p.version = c.version.replace(/^\d+:/, "").replace(/[+-].*$/, "");
    p.installedSha256 = unpacked.installedSha256;
    rmSync(unpacked.tmp, { recursive: true, force: true });
    locked.push(p);
    console.log(`${name} ${p.version}  ←  ${debian} ${c.version}`);
  }
  const lock: Lock = {
    lockVersion: 1,
    distribution: "debian bookworm (amd64)",
    root: "usr/lib/python3/dist-packages",
    packages: locked,
  };
  const text = JSON.stringify(lock, null, 2) + "\n";
  parseLock(Buffer.from(text), "generated lock"); // the schema the runtime checks
  writeFileSync(DEFAULT_LOCK_PATH, text);
  console.log(`wrote ${DEFAULT_LOCK_PATH}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
