// `wasmcell run`: one run through the front door, readable output by default, one JSON object with
// --json. Returned files are written only inside --out-dir, and never through a symlink out of it.
// Display items (a figure, a table, display(x)) print their text/plain as they happen; with
// --out-dir each item's other types are written as display-<n>.<ext> (png, svg, html, md, json, …).

import { lstat, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from "node:path";
import { inspect, parseArgs } from "node:util";
import { encodeValue } from "../core/values.ts";
import { formatBytes } from "../adapters/tools/format.ts";
import { checkRelativePath, DEFAULT_PYTHON } from "../options/index.ts";
import { createSandbox } from "../index.ts";
import {
  ENGINE_INFO,
  PYTHON_ENGINES,
  type DisplayItem,
  type Language,
  type Limits,
  type OutputFile,
  type RunRequest,
  type RunResult,
} from "../core/types.ts";
import { eventPrinter, networkFromFlags } from "./events.ts";
import { openSessionFile, saveSessionFile, sessionKey } from "./session-file.ts";
import { forTerminal } from "./terminal.ts";
import { EXIT, UsageError, oneOf, positiveInt, type Io } from "./usage.ts";

const LANG_FLAGS = {
  js: "javascript",
  javascript: "javascript",
  ts: "typescript",
  typescript: "typescript",
  py: "python",
  python: "python",
} as const;
const EXTENSIONS: Record<string, Language> = {
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".ts": "typescript",
  ".mts": "typescript",
  ".py": "python",
};

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      eval: { type: "string", short: "e" },
      lang: { type: "string" },
      engine: { type: "string" },
      "timeout-ms": { type: "string" },
      "memory-mb": { type: "string" },
      file: { type: "string", multiple: true },
      "out-dir": { type: "string" },
      json: { type: "boolean" },
      allow: { type: "string", multiple: true },
      verbose: { type: "boolean" },
      session: { type: "string" },
    },
  });
  const langFlag = oneOf("--lang", values.lang, Object.keys(LANG_FLAGS) as (keyof typeof LANG_FLAGS)[]);
  const engine = oneOf("--engine", values.engine, PYTHON_ENGINES);
  const limits: Partial<Limits> = {};
  const timeoutMs = positiveInt("--timeout-ms", values["timeout-ms"]);
  const memoryMb = positiveInt("--memory-mb", values["memory-mb"]);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;

  // Exactly one source of code: -e CODE, a file, or - for stdin.
  if (values.eval !== undefined && positionals.length > 0)
    throw new UsageError("give either -e CODE or a file, not both");
  if (values.eval === undefined && positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? "nothing to run: give a file, - for stdin, or -e CODE"
        : `one file at a time, got ${positionals.length}`,
    );
  }
  let code: string;
  let inferred: Language | undefined;
  const source = positionals[0];
  if (values.eval !== undefined) {
    code = values.eval;
  } else if (source === "-") {
    code = await readStream(io.stdin);
  } else {
    code = await readFile(source!, "utf8").catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read ${source}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
    });
    inferred = EXTENSIONS[extname(source!).toLowerCase()];
    if (!inferred && !langFlag)
      throw new UsageError(`cannot tell the language of ${source} from its extension; pass --lang js|ts|python`);
  }
  const language: Language = langFlag ? LANG_FLAGS[langFlag] : (inferred ?? "javascript");
  if (engine && language !== "python")
    throw new UsageError(`--engine ${engine} runs Python, but the language is ${language}`);

  const files: Record<string, Uint8Array> = {};
  for (const spec of values.file ?? []) {
    const eq = spec.indexOf("=");
    const [name, path] = eq > 0 ? [spec.slice(0, eq), spec.slice(eq + 1)] : [basename(spec), spec];
    const problem = checkRelativePath(name);
    if (problem) throw new UsageError(`--file ${spec}: ${problem}`);
    files[name] = await readFile(path).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(
        `--file ${spec}: cannot read ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`,
      );
    });
  }

  const json = values.json === true;
  const request: RunRequest = { language, code, limits, files };
  if (engine) request.engine = engine;
  if (!json) {
    request.onOutput = (chunk) => {
      const stream = chunk.stream === "stdout" ? io.stdout : io.stderr;
      stream.write(forTerminal(stream, chunk.text));
    };
    // As a notebook shows them, in order with the output; the main item is printed as the value.
    request.onResult = (item) => {
      if (!item.main) io.stdout.write(`${forTerminal(io.stdout, item.data["text/plain"].replace(/\n?$/, "\n"))}`);
    };
  }

  const sessionFile = values.session;
  if (sessionFile !== undefined && (language !== "python" || !ENGINE_INFO[engine ?? DEFAULT_PYTHON.engine].snapshots))
    throw new UsageError("--session keeps a Python (pyodide) session in a file; the language here is not that");
  const key = sessionFile === undefined ? undefined : sessionKey(process.env);

  // One run: no pool to keep warm beyond a single sidecar.
  await using sandbox = await createSandbox({
    ...(language === "python" ? { python: { pool: 1, prewarm: false } } : {}),
    ...(key ? { sessions: { key, idleMs: false } } : {}),
    ...networkFromFlags(values.allow),
    // Engine builds and a missing package library are always said (a first run is never a silent
    // wait); refusals and limits only with --verbose.
    onEvent: eventPrinter(io.stderr, false, values.verbose === true),
  });
  let result: RunResult;
  if (sessionFile === undefined) result = await sandbox.run(request);
  else {
    const session = await openSessionFile(sandbox, sessionFile);
    const { language: _language, engine: _engine, ...rest } = request;
    result = await session.run(rest);
    await saveSessionFile(session, sessionFile);
  }
  const shown = displayFiles(result.results, new Set(result.files.map((f) => f.path)));
  const written = values["out-dir"] === undefined ? [] : await writeFiles(values["out-dir"], result.files);
  const writtenShown = values["out-dir"] === undefined ? [] : await writeFiles(values["out-dir"], shown);
  const refused = [...written, ...writtenShown].filter((w) => w.error !== undefined);

  if (json) {
    io.stdout.write(`${JSON.stringify(toJson(result, written, shown, writtenShown))}\n`);
  } else {
    printReadable(result, written, values["out-dir"] !== undefined, io);
    printShown(shown, writtenShown, values["out-dir"] !== undefined, io);
  }
  if (!result.ok || refused.length > 0) return EXIT.guestFailure;
  return EXIT.ok;
}

interface Written {
  path: string;
  /** Where the file went, when it was written. */
  writtenTo?: string;
  /** Why it was not written. */
  error?: string;
}

/**
 * Writes returned files under `outDir`. A path is refused if it is not a clean relative path, or if
 * the place it would land (after resolving symlinks already inside `outDir`) is outside `outDir`, or if
 * the target itself is a symlink: a guest's file names must never make us write elsewhere.
 */
async function writeFiles(outDir: string, files: OutputFile[]): Promise<Written[]> {
  await mkdir(outDir, { recursive: true });
  const root = await realpath(outDir);
  const out: Written[] = [];
  for (const file of files) {
    const problem = checkRelativePath(file.path);
    if (problem) {
      out.push({ path: file.path, error: `refused: ${problem}` });
      continue;
    }
    const target = resolve(root, file.path);
    try {
      await mkdir(dirname(target), { recursive: true });
      const parent = await realpath(dirname(target));
      const rel = relative(root, join(parent, basename(target)));
      if (rel.startsWith("..") || isAbsolute(rel)) throw new Error("it would land outside the output directory");
      const existing = await lstat(target).catch(() => undefined);
      if (existing?.isSymbolicLink()) throw new Error("the target is a symbolic link");
      if (existing && !existing.isFile()) throw new Error("the target exists and is not a file");
      await writeFile(target, file.bytes);
      const shown = relative(process.cwd(), target);
      out.push({ path: file.path, writtenTo: shown.startsWith("..") || isAbsolute(shown) ? target : shown });
    } catch (error) {
      out.push({ path: file.path, error: `refused: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return out;
}

/** The file extension each display MIME type is written with (text/plain is printed, not written). */
const DISPLAY_EXTENSIONS: Record<string, string> = {
  "text/html": "html",
  "text/markdown": "md",
  "text/latex": "tex",
  "image/svg+xml": "svg",
  "application/javascript": "js",
  "application/json": "json",
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "application/pdf": "pdf",
};
const BINARY_DISPLAY = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"]);

/** A displayed item's MIME type as a file to write: display-<n>.<ext>, n from 1 in the order shown. */
interface ShownFile extends OutputFile {
  /** Which item (0-based) it came from. */
  item: number;
}

/**
 * Each item's types other than text/plain as files named by the host (never by the guest): a name a
 * returned file already has is skipped, so a displayed item never overwrites what the run wrote.
 */
function displayFiles(items: DisplayItem[], taken: ReadonlySet<string>): ShownFile[] {
  const out: ShownFile[] = [];
  items.forEach((item, i) => {
    for (const [type, value] of Object.entries(item.data)) {
      const ext = DISPLAY_EXTENSIONS[type];
      if (!ext) continue;
      const path = `display-${i + 1}.${ext}`;
      if (taken.has(path)) continue;
      const bytes = BINARY_DISPLAY.has(type)
        ? new Uint8Array(Buffer.from(String(value), "base64"))
        : new TextEncoder().encode(type === "application/json" ? JSON.stringify(value, null, 2) : String(value));
      out.push({ path, bytes, mimeType: type, item: i });
    }
  });
  return out;
}

function printShown(shown: ShownFile[], written: Written[], hasOutDir: boolean, io: Io): void {
  const byPath = new Map(written.map((w) => [w.path, w]));
  for (const f of shown) {
    const w = byPath.get(f.path);
    const size = formatBytes(f.bytes.byteLength);
    if (w?.writtenTo) io.stderr.write(`wasmcell: wrote ${w.writtenTo} (${f.mimeType}, ${size})\n`);
    else if (w?.error) io.stderr.write(`wasmcell: did not write ${f.path} (${f.mimeType}, ${size}): ${w.error}\n`);
    else if (!hasOutDir)
      io.stderr.write(`wasmcell: the run displayed ${f.mimeType} (${size}); pass --out-dir DIR to save it\n`);
  }
}

/** The --json shape. Values JSON cannot hold are tagged objects (see encodeValue). */
function toJson(
  result: RunResult,
  written: Written[],
  shown: ShownFile[],
  writtenShown: Written[],
): Record<string, unknown> {
  const byPath = new Map(written.map((w) => [w.path, w]));
  const shownAt = new Map(writtenShown.map((w) => [w.path, w]));
  return {
    ok: result.ok,
    language: result.language,
    ...(result.ok ? { value: encodeValue(result.value) } : {}),
    stdout: result.stdout,
    stderr: result.stderr,
    outputTruncated: result.outputTruncated,
    ...(result.ok ? {} : { error: result.error }),
    stats: result.stats,
    files: result.files.map((f) => ({
      path: f.path,
      size: f.bytes.byteLength,
      mimeType: f.mimeType,
      ...stripPath(byPath.get(f.path)),
    })),
    // Each item as the run returned it; with --out-dir, where each of its types was written.
    results: result.results.map((item, i) => {
      const files = shown
        .filter((f) => f.item === i && shownAt.get(f.path)?.writtenTo !== undefined)
        .map((f) => [f.mimeType, shownAt.get(f.path)!.writtenTo]);
      return files.length > 0 ? { ...item, writtenTo: Object.fromEntries(files) as Record<string, string> } : item;
    }),
  };
}

function stripPath(w: Written | undefined): Omit<Written, "path"> {
  if (!w) return {};
  const { path: _path, ...rest } = w;
  return rest;
}

function printReadable(result: RunResult, written: Written[], hasOutDir: boolean, io: Io): void {
  // stdout/stderr already streamed; make sure the value starts on its own line.
  if (result.stdout && !result.stdout.endsWith("\n")) io.stdout.write("\n");
  if (result.stderr && !result.stderr.endsWith("\n")) io.stderr.write("\n");
  const main = result.results.find((i) => i.main);
  if (result.ok && main) {
    // A rich last value (a DataFrame, a figure): its text, as a notebook prints it.
    io.stdout.write(`${forTerminal(io.stdout, main.data["text/plain"].replace(/\n?$/, "\n"))}`);
  } else if (result.ok) {
    // Like the REPLs: nothing for undefined (Python's None comes back as undefined).
    if (result.value !== undefined)
      io.stdout.write(`${forTerminal(io.stdout, inspect(result.value, { depth: 8, maxArrayLength: 200 }))}\n`);
  } else {
    const e = result.error;
    const where =
      e.line !== undefined ? ` (line ${e.line}${e.column !== undefined ? `, column ${e.column}` : ""})` : "";
    io.stderr.write(forTerminal(io.stderr, `wasmcell: ${e.kind} error: ${e.name}: ${e.message}${where}\n`));
    if (e.stack) io.stderr.write(forTerminal(io.stderr, `${e.stack.replace(/^/gm, "    ")}\n`));
  }
  const byPath = new Map(written.map((w) => [w.path, w]));
  for (const f of result.files) {
    const w = byPath.get(f.path);
    const what = `${f.path} (${f.mimeType}, ${formatBytes(f.bytes.byteLength)})`;
    if (w?.writtenTo) io.stderr.write(`wasmcell: wrote ${w.writtenTo} ${what.slice(f.path.length + 1)}\n`);
    else if (w?.error) io.stderr.write(`wasmcell: did not write ${what}: ${w.error}\n`);
    else if (!hasOutDir) io.stderr.write(`wasmcell: the run returned ${what}; pass --out-dir DIR to save it\n`);
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
