// head, tail and wc over workspace files, as GNU coreutils prints them for the options they accept:
// head/tail -n N (head -n -N: all but the last N; tail -n +N: from line N on), -c N, the old -N form;
// wc -l -w -m -c in any mix. Any other option, and reading standard input (there is none: a command
// gets no input), is refused with exit 2 saying why.

import { parseFlags, readArgument, unsupported } from "./command-args.ts";
import type { CommandContext } from "./command-context.ts";

type Builtin = (args: string[], ctx: CommandContext) => number;

const decoder = new TextDecoder();

function noInput(name: string, ctx: CommandContext): 2 {
  ctx.write("stderr", `${name}: reading standard input is not supported here (commands get no input); name a file\n`);
  return 2;
}

/** What head/tail were asked for: a count of lines or bytes, signed as given (`-5`, `+5`, `5`). */
interface Amount {
  unit: "lines" | "bytes";
  /** The number as written: "+" (tail: from), "-" (head: all but), or none. */
  sign: "" | "+" | "-";
  count: number;
}

/** Parses head/tail's options; a number to print, or the exit code after a message. */
function parseAmount(name: "head" | "tail", args: string[], ctx: CommandContext): [Amount, string[]] | number {
  let amount: Amount = { unit: "lines", sign: "", count: 10 };
  let i = 0;
  const number = (unit: Amount["unit"], given: string | undefined): Amount | number => {
    const m = given === undefined ? null : /^([+-]?)(\d{1,15})$/.exec(given);
    if (!m) {
      if (given === undefined) {
        ctx.write("stderr", `${name}: option requires an argument -- '${unit === "lines" ? "n" : "c"}'\n`);
        return 2;
      }
      ctx.write("stderr", `${name}: invalid number of ${unit}: '${given}'\n`);
      return 1;
    }
    // As GNU: tail -n -5 is tail -n 5 and head -n +5 is head -n 5; head -n -5 is all but the last 5
    // lines, tail -n +5 is from the fifth line on.
    const sign = (m[1] === (name === "tail" ? "-" : "+") ? "" : m[1]) as Amount["sign"];
    return { unit, sign, count: Number(m[2]) };
  };
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    let parsed: Amount | number;
    if (/^-\d+$/.test(a)) parsed = { unit: "lines", sign: "", count: Number(a.slice(1)) };
    else if (a === "-n" || a === "-c") parsed = number(a === "-n" ? "lines" : "bytes", args[++i]);
    else if (/^-[nc]./.test(a)) parsed = number(a[1] === "n" ? "lines" : "bytes", a.slice(2));
    else return unsupported(name, a, "nc", ctx);
    if (typeof parsed === "number") return parsed;
    amount = parsed;
  }
  return [amount, args.slice(i)];
}

/** The part of `bytes` head or tail prints. */
function cut(name: "head" | "tail", bytes: Uint8Array, a: Amount): string {
  if (a.unit === "bytes") {
    let part: Uint8Array;
    if (name === "head")
      part = a.sign === "-" ? bytes.subarray(0, Math.max(0, bytes.length - a.count)) : bytes.subarray(0, a.count);
    else
      part =
        a.sign === "+" ? bytes.subarray(Math.max(0, a.count - 1)) : bytes.subarray(Math.max(0, bytes.length - a.count));
    return decoder.decode(part);
  }
  // Each line keeps its terminator; a last line without one is still a line.
  const lines = decoder
    .decode(bytes)
    .split(/(?<=\n)/)
    .filter((l) => l !== "");
  let part: string[];
  if (name === "head")
    part = a.sign === "-" ? lines.slice(0, Math.max(0, lines.length - a.count)) : lines.slice(0, a.count);
  else part = a.sign === "+" ? lines.slice(Math.max(0, a.count - 1)) : a.count === 0 ? [] : lines.slice(-a.count);
  return part.join("");
}

function headOrTail(name: "head" | "tail"): Builtin {
  return (args, ctx) => {
    const parsed = parseAmount(name, args, ctx);
    if (typeof parsed === "number") return parsed;
    const [amount, files] = parsed;
    if (files.length === 0 || files.includes("-")) return noInput(name, ctx);
    let code = 0;
    let first = true;
    for (const path of files) {
      const file = readArgument(path, ctx);
      if ("problem" in file || file.bytes === null) {
        const problem = "problem" in file ? file.problem : "No such file or directory";
        ctx.write(
          "stderr",
          problem === "Is a directory"
            ? `${name}: error reading '${path}': Is a directory\n`
            : `${name}: cannot open '${path}' for reading: ${problem}\n`,
        );
        code = 1;
        continue;
      }
      if (files.length > 1) ctx.write("stdout", `${first ? "" : "\n"}==> ${path} <==\n`);
      first = false;
      ctx.write("stdout", cut(name, file.bytes, amount));
    }
    return code;
  };
}

const WC_FLAGS = "lwmc";

const wc: Builtin = (args, ctx) => {
  const parsed = parseFlags("wc", args, WC_FLAGS, ctx);
  if (!parsed) return 2;
  const [flags, files] = parsed;
  if (files.length === 0 || files.includes("-")) return noInput("wc", ctx);
  // GNU's order, whatever order the flags came in; none means lines, words and bytes.
  const shown = [...WC_FLAGS].filter((f) => (flags.size === 0 ? f !== "m" : flags.has(f)));
  const rows: { counts: number[]; name: string }[] = [];
  const total = shown.map(() => 0);
  let bytesSeen = 0;
  let code = 0;
  for (const path of files) {
    const file = readArgument(path, ctx);
    if ("problem" in file || file.bytes === null) {
      ctx.write("stderr", `wc: ${path}: ${"problem" in file ? file.problem : "No such file or directory"}\n`);
      code = 1;
      continue;
    }
    const text = decoder.decode(file.bytes);
    const all: Record<string, number> = {
      l: (text.match(/\n/g) ?? []).length,
      w: (text.match(/\S+/g) ?? []).length,
      m: [...text].length,
      c: file.bytes.byteLength,
    };
    const counts = shown.map((f) => all[f]!);
    counts.forEach((n, k) => (total[k]! += n));
    bytesSeen += file.bytes.byteLength;
    rows.push({ counts, name: path });
  }
  if (files.length > 1) rows.push({ counts: total, name: "total" });
  // GNU pads every count to the width of the files' total size, except one count of one file.
  const width = shown.length === 1 && files.length === 1 ? 1 : String(bytesSeen).length;
  for (const row of rows) {
    ctx.write("stdout", `${row.counts.map((n) => String(n).padStart(width)).join(" ")} ${row.name}\n`);
  }
  return code;
};

export const TEXT_BUILTINS: Record<string, Builtin> = { head: headOrTail("head"), tail: headOrTail("tail"), wc };
