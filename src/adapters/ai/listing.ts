// `ls` over the workspace, as GNU ls prints to a pipe (one name a line): -1 -a -A -d -l -h -r -t -S.
// `-l` prints the long format with what the workspace knows — the type, the size, the last write
// (UTC) — and fixed columns for what it does not have: every file reads `-rw-r--r--`, every directory
// `drwxr-xr-x`, owned by `sandbox`, a directory's size is 0 (an in-memory directory takes no blocks),
// and `total` counts the listed files' sizes in 1 KiB blocks. Any other flag is refused (exit 2).

import { parseFlags, resolveOperand } from "./command-args.ts";
import type { CommandContext } from "./command-context.ts";
import type { EntryType } from "./workspace.ts";

const FLAGS = "1aAdlhrtS";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const HALF_YEAR_MS = (365.2425 / 2) * 24 * 3600 * 1000;

interface Entry {
  /** As printed: the name in a directory, or the operand as given. */
  name: string;
  key: string;
  type: EntryType;
  size: number;
  mtime: number;
}

export function ls(args: string[], ctx: CommandContext): number {
  const parsed = parseFlags("ls", args, FLAGS, ctx);
  if (!parsed) return 2;
  const [flags, operands] = parsed;
  const paths = operands.length > 0 ? operands : ["."];
  let code = 0;
  const files: Entry[] = [];
  const dirs: Entry[] = [];
  for (const path of paths) {
    const key = resolveOperand("ls", path, ctx);
    if (key === undefined) {
      code = 2;
      continue;
    }
    const entry = entryOf(path, key, ctx);
    if (!entry) {
      ctx.write("stderr", `ls: cannot access '${path}': No such file or directory\n`);
      code = 2;
    } else (entry.type === "file" || flags.has("d") ? files : dirs).push(entry);
  }
  // As GNU ls: the file operands first, then each directory's contents under its name when there are several.
  const blocks: string[] = [];
  if (files.length > 0) blocks.push(render(sort(files, flags), flags, false));
  for (const dir of sort(dirs, flags)) {
    const body = render(sort(contents(dir, flags, ctx), flags), flags, true);
    blocks.push(paths.length > 1 ? `${dir.name}:\n${body}` : body);
  }
  ctx.write("stdout", blocks.join("\n"));
  return code;
}

function entryOf(name: string, key: string, ctx: CommandContext): Entry | undefined {
  const stat = ctx.workspace.stat(key);
  if (!stat) return undefined;
  return { name, key, type: stat.type, size: stat.size, mtime: ctx.workspace.mtime(key) ?? 0 };
}

function contents(dir: Entry, flags: Set<string>, ctx: CommandContext): Entry[] {
  const hidden = flags.has("a") || flags.has("A");
  const out: Entry[] = [];
  for (const e of ctx.workspace.list(dir.key) ?? []) {
    if (!hidden && e.name.startsWith(".")) continue;
    out.push(entryOf(e.name, dir.key === "" ? e.name : `${dir.key}/${e.name}`, ctx)!);
  }
  if (flags.has("a")) {
    // `..` of the base directory is outside the workspace: it is shown as the base itself.
    const parent = dir.key.includes("/") ? dir.key.slice(0, dir.key.lastIndexOf("/")) : "";
    out.push({ ...dir, name: "." }, { ...entryOf("..", parent, ctx)!, name: ".." });
  }
  return out;
}

function sort(entries: Entry[], flags: Set<string>): Entry[] {
  const byName = (a: Entry, b: Entry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const order = flags.has("t")
    ? (a: Entry, b: Entry) => b.mtime - a.mtime || byName(a, b)
    : flags.has("S")
      ? (a: Entry, b: Entry) => b.size - a.size || byName(a, b)
      : byName;
  const sorted = [...entries].sort(order);
  return flags.has("r") ? sorted.reverse() : sorted;
}

function render(entries: Entry[], flags: Set<string>, directory: boolean): string {
  if (!flags.has("l")) return entries.map((e) => `${e.name}\n`).join("");
  const human = flags.has("h");
  const size = (n: number) => (human ? humanSize(n) : String(n));
  const rows = entries.map((e) => ({
    mode: e.type === "directory" ? "drwxr-xr-x" : "-rw-r--r--",
    links: String(e.type === "directory" ? 2 : 1),
    size: size(e.size),
    when: stamp(e.mtime),
    name: e.name,
  }));
  const linkWidth = Math.max(0, ...rows.map((r) => r.links.length));
  const sizeWidth = Math.max(0, ...rows.map((r) => r.size.length));
  const lines = rows.map(
    (r) =>
      `${r.mode} ${r.links.padStart(linkWidth)} sandbox sandbox ${r.size.padStart(sizeWidth)} ${r.when} ${r.name}\n`,
  );
  if (!directory) return lines.join("");
  const blocks = entries.reduce((sum, e) => sum + Math.ceil(e.size / 1024), 0);
  return `total ${human ? humanSize(blocks * 1024) : blocks}\n${lines.join("")}`;
}

/** GNU's `-h`: powers of 1024, one decimal below 10, always rounded up. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return String(bytes);
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    unit++;
  }
  const suffix = "KMGTP"[unit - 1]!;
  if (value < 10) {
    const tenths = Math.ceil(value * 10) / 10;
    return tenths < 10 ? `${tenths.toFixed(1)}${suffix}` : `10${suffix}`;
  }
  return `${Math.ceil(value)}${suffix}`;
}

/** `Dec  7 12:38` for the last six months, else `Dec  7  2025`, in UTC (the sandbox's time zone). */
function stamp(ms: number): string {
  const d = new Date(ms);
  const day = `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)}`;
  const recent = Math.abs(Date.now() - ms) < HALF_YEAR_MS;
  const hh = String(d.getUTCHours()).padStart(2, "0");
  const mm = String(d.getUTCMinutes()).padStart(2, "0");
  return recent ? `${day} ${hh}:${mm}` : `${day}  ${d.getUTCFullYear()}`;
}
