// The one `run_code` tool every adapter exposes: its name, description, input schema and the call that
// turns model arguments into a sandbox run and the result into model-facing text. The AI SDK tool, the
// MCP server and the raw JSON Schemas are all built from this, so they cannot drift apart.
//
// Why one tool with a `language` field and not one tool per language: the model sees a single schema
// whichever engine answers (an application can switch Python from Pyodide to the native tier without the
// model noticing), the return contract and limits are written once instead of twice in the prompt, and
// choosing a language from an enum is something models do reliably. Applications that only want some
// languages narrow the enum with `languages`.

import { describeNetwork } from "./network.ts";
import { z } from "zod";
import { InvalidOptionError, WasmcellError } from "../../core/errors.ts";
import { makeOffer, requestWithin, type Offer } from "../../options/index.ts";
import type { Sandbox, Session } from "../../sandbox.ts";
import {
  ENGINE_INFO,
  LANGUAGES,
  PYTHON_ENGINES,
  type Language,
  type PythonEngine,
  type Limits,
  type OutputChunk,
  type RunRequest,
  type RunResult,
} from "../../core/types.ts";
import { DEFAULT_FORMAT, formatBadInput, formatResult, type FormatOptions, type ToolOutput } from "./format.ts";

export const RUN_CODE_TOOL_NAME = "run_code";

/** Settings that belong to the application, never to the model. */
export interface CodeToolOptions {
  /** The sandbox that runs the code. The application creates and closes it. */
  sandbox: Sandbox;
  /** The tool's name as the model sees it. */
  name?: string;
  /** Per-run limit overrides for every call of this tool (on top of the sandbox's defaults). */
  limits?: Partial<Limits>;
  /** Caps on what goes back to the model (characters of text, inlined file sizes). */
  output?: Partial<Omit<FormatOptions, "limits">>;
  /** A sentence appended to the description (e.g. which Python packages this deployment has). */
  notes?: string;
}

export interface RunCodeToolOptions extends CodeToolOptions {
  /** The languages the model may pick. Defaults to all three. */
  languages?: readonly Language[];
  /** The engine for Python runs. Defaults to the sandbox's `python.engine`. */
  pythonEngine?: PythonEngine;
  /**
   * Keep one interpreter per language across calls, so variables, functions and imports from earlier
   * calls stay available (a REPL the model builds on). Default false: every call starts clean. The
   * sessions belong to the sandbox and close with it; after a timeout, memory or crash failure the
   * language's session restarts empty (the model is told). Not available for the native tier.
   */
  session?: boolean;
  /**
   * With `session`: the tool takes an optional `session` argument naming one of several sessions (a
   * fork's id, from the MCP server's `fork_session` tool). Only for a runner that keeps named sessions.
   * @defaultValue false
   */
  namedSessions?: boolean;
}

/**
 * Where a tool with `session: true` keeps its interpreters: one per language in this process by default
 * (SessionPerLanguage); the MCP server's stored sessions put them in a SessionStore between calls.
 * `session` is the `session` argument when the tool takes one (`namedSessions`).
 */
export interface SessionRunner {
  run(request: RunRequest, session: string | undefined): Promise<RunResult>;
  /** The language's session ended (a failure that ends sessions): the next call starts afresh. */
  reset(language: Language, session: string | undefined): void;
  close(): Promise<void>;
}

/** What a session id given as the `session` argument looks like: a UUID, as the MCP server makes them. */
export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Per-call hooks an adapter supplies: cancellation and live output (MCP streams it). */
export interface CallHooks {
  signal?: AbortSignal;
  onOutput?: (chunk: OutputChunk) => void;
  /** Called with the run's result before it is formatted (the MCP server counts outcomes by kind). */
  onResult?: (result: RunResult) => void;
  /** Opaque per-call data handed to bridged tools in code mode (the AI SDK passes messages and context). */
  context?: unknown;
}

export interface RunCodeInput {
  language: Language;
  code: string;
  files?: Record<string, string> | undefined;
  session?: string | undefined;
}

/** A tool as every adapter needs it: name, description, zod schema, JSON Schema, and the call. */
export interface CodeTool<INPUT> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: z.ZodType<INPUT>;
  /** The input schema as JSON Schema (draft 2020-12 subset every function-calling API accepts). */
  readonly jsonSchema: Record<string, unknown>;
  /** Validates `input` (bad input comes back as an `isError` output, never a throw) and runs it. */
  call(input: unknown, hooks?: CallHooks): Promise<ToolOutput>;
  /** Closes what the tool holds (its sessions, with `session: true`); the sandbox stays open. */
  close(): Promise<void>;
}

/**
 * What a call may use: the sandbox's settings with the tool's own. The model's arguments name none of
 * them; its request is still made by requestWithin from this offer, as every face's is (a field added
 * to the input schema later cannot carry the model past the application's limits).
 */
export function toolOffer(options: CodeToolOptions & { pythonEngine?: PythonEngine | undefined }): Offer {
  return makeOffer({ sandbox: options.sandbox.options, limits: options.limits, pythonEngine: options.pythonEngine });
}

export function formatOptions(options: CodeToolOptions, limits: Limits): FormatOptions {
  return { ...DEFAULT_FORMAT, ...stripUndefined(options.output ?? {}), limits };
}

export function defineRunCodeTool(options: RunCodeToolOptions): CodeTool<RunCodeInput> {
  return runCodeToolFactory(options)();
}

/**
 * Checks the options and builds what depends on them alone (the zod schema, its JSON Schema, the
 * description) once, and returns a function that makes `run_code` tools from that: a server that makes
 * one tool per connection or per request (the MCP HTTP server) pays for the schema conversion and the
 * description once, not on every request. Each tool made has its own sessions with `session: true`.
 */
export function runCodeToolFactory(options: RunCodeToolOptions): (runner?: SessionRunner) => CodeTool<RunCodeInput> {
  const languages = options.languages ?? LANGUAGES;
  if (languages.length === 0 || languages.some((l) => !LANGUAGES.includes(l))) {
    throw new InvalidOptionError("languages", `must be a non-empty list of ${LANGUAGES.join(", ")}`);
  }
  const offer = toolOffer(options);
  const { defaults: limits, pythonEngine } = offer;
  if (options.namedSessions && !options.session)
    throw new InvalidOptionError("namedSessions", "names sessions, so it needs session: true");
  const inputSchema = runCodeSchema(languages as [Language, ...Language[]], limits, options.namedSessions === true);
  const format = formatOptions(options, limits);
  if (options.session && !ENGINE_INFO[pythonEngine].sessions && languages.includes("python")) {
    const stateful = PYTHON_ENGINES.filter((e) => ENGINE_INFO[e].sessions).map((e) => `"${e}"`);
    throw new InvalidOptionError(
      "session",
      `the ${pythonEngine} Python tier runs every call afresh and keeps no state; use pythonEngine ${stateful.join(" or ")} or leave python out of languages`,
    );
  }
  const name = options.name ?? RUN_CODE_TOOL_NAME;
  const description = describeRunCode(
    languages,
    limits,
    pythonEngine,
    options.notes,
    options.session === true ? (options.namedSessions ? "named" : "one") : "none",
    options.sandbox.describeJavaScriptRuntime(),
    describeNetwork(options.sandbox.options.network, pythonEngine),
    options.sandbox.pythonPackages(),
  );
  const jsonSchema = toJsonSchema(inputSchema);
  return (runner) => {
    const sessions = options.session ? (runner ?? new SessionPerLanguage(options.sandbox, pythonEngine)) : undefined;
    return {
      name,
      description,
      inputSchema,
      jsonSchema,
      async call(input, hooks = {}) {
        const parsed = inputSchema.safeParse(input);
        if (!parsed.success) return formatBadInput(zodMessage(parsed.error));
        const { language, code, files, session } = parsed.data;
        const request = requestWithin({ language, code, ...(files ? { files } : {}) }, offer);
        if (hooks.signal) request.signal = hooks.signal;
        if (hooks.onOutput) request.onOutput = hooks.onOutput;
        const observed = async (result: Promise<RunResult>) => {
          const r = await result;
          hooks.onResult?.(r);
          return r;
        };
        if (!sessions) return runForModel(() => observed(options.sandbox.run(request)), format);
        let restarted = false;
        const output = await runForModel(async () => {
          const result = await observed(sessions.run(request, session));
          restarted = !result.ok && ENDS_SESSION.has(result.error.kind);
          if (restarted) sessions.reset(language, session);
          return result;
        }, format);
        if (restarted)
          output.text +=
            "\nThe session was restarted after this error: variables and imports from earlier calls are gone.";
        return output;
      },
      close: () => sessions?.close() ?? Promise.resolve(),
    };
  };
}

/** Failures after which an interpreter's state cannot be trusted (or the interpreter is gone). */
export const ENDS_SESSION: ReadonlySet<string> = new Set<string>(["timeout", "memory", "crashed"]);

/** One stateful session per language, opened on first use, replaced after a failure that ends it. */
class SessionPerLanguage implements SessionRunner {
  readonly #sandbox: Sandbox;
  readonly #pythonEngine: PythonEngine;
  readonly #open = new Map<Language, Promise<Session>>();

  constructor(sandbox: Sandbox, pythonEngine: PythonEngine) {
    this.#sandbox = sandbox;
    this.#pythonEngine = pythonEngine;
  }

  async run(request: RunRequest): Promise<RunResult> {
    // No `session` argument: the tool takes one only with namedSessions, which this runner is not for.
    const { language, engine: _engine, ...rest } = request;
    let session = this.#open.get(language);
    if (!session) {
      session = this.#sandbox.session(language === "python" ? { language, engine: this.#pythonEngine } : { language });
      this.#open.set(language, session);
      session.catch(() => this.#open.delete(language));
    }
    return (await session).run(rest);
  }

  async close(): Promise<void> {
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.allSettled(open.map(async (s) => (await s).close()));
  }

  reset(language: Language): void {
    const session = this.#open.get(language);
    this.#open.delete(language);
    // The session was opened for a caller that has gone: a failure to open or close it has no one to reach.
    session?.then((s) => s.close()).catch(() => undefined);
  }
}

/**
 * Runs a request and formats the result for a model. Host-side refusals a model can act on (a request
 * field out of bounds, a full queue, an engine this host lacks) come back as `isError` text; anything
 * else is a bug in wasmcell or the application and is thrown.
 */
export async function runForModel(run: () => Promise<RunResult>, format: FormatOptions): Promise<ToolOutput> {
  try {
    return formatResult(await run(), format);
  } catch (error) {
    if (error instanceof InvalidOptionError) return formatBadInput(error.message.replace(/^request\./, ""));
    if (error instanceof WasmcellError) {
      return { isError: true, text: `error: the sandbox could not run this: ${error.message}`, files: [], results: [] };
    }
    throw error;
  }
}

function runCodeSchema(languages: [Language, ...Language[]], limits: Limits, named: boolean) {
  const base = z.object({
    language: z
      .enum(languages, { error: () => `language must be one of ${languages.map((l) => `"${l}"`).join(", ")}` })
      .describe("The language of `code`."),
    code: codeField(limits),
    files: z
      .record(z.string(), z.string({ error: "each file's content must be a string (UTF-8 text)" }))
      .optional()
      .describe(
        "Optional input files placed in the working directory before the run: relative path → UTF-8 text content.",
      ),
  });
  // Without named sessions the field is not there at all, so `session` is refused as an unknown argument.
  const session = sessionField(
    "Optional: the id of a forked session (from fork_session) to run in; omit it for this connection's own session.",
  );
  const withSession = base.extend({ session }).strict();
  // The plain schema's output is the named one's without `session`, which the type has as optional.
  return named ? withSession : (base.strict() as unknown as typeof withSession);
}

/** An optional `session` argument (run_code with named sessions, the MCP server's fork_session). */
export function sessionField(description: string) {
  return z
    .string({ error: "session must be a string" })
    .regex(SESSION_ID, "session must be a session id as fork_session returned it")
    .optional()
    .describe(description);
}

/** The `code` field, shared by run_code and code mode: a non-empty string within the code-size cap. */
export function codeField(limits: Limits) {
  // Characters ≤ bytes in UTF-8, so this bound never rejects code the byte cap would accept; the front
  // door then checks the exact byte size and its refusal comes back as bad input too.
  return z
    .string({ error: "code must be a string" })
    .min(1, "code is empty")
    .max(limits.maxCodeBytes, `code is longer than the ${limits.maxCodeBytes}-byte limit`)
    .describe("The program to run.");
}

/** What each Python engine gives the code, for the model (`library`: the mounted packages, or ""). */
const PYTHON_RUNTIME: Record<PythonEngine, (library: string) => string> = {
  pyodide: (library) =>
    `Python: CPython compiled to WebAssembly (Pyodide) with the standard library${library || " only"}; no pip install, no threads or subprocesses.`,
  native: (library) =>
    `Python: CPython with the standard library, numpy, pandas and matplotlib${library}; plt.show() (and any figure left open) shows you the chart, a DataFrame as the last expression shows you its table; no pip install.`,
};

// What the JavaScript box provides comes from the runtime's own table, so the model is told exactly
// what the guest gets.
function describeRunCode(
  languages: readonly Language[],
  limits: Limits,
  pythonEngine: PythonEngine,
  notes: string | undefined,
  session: "none" | "one" | "named",
  runtime: string,
  network: string,
  packages: readonly string[] | undefined,
): string {
  const js = languages.includes("javascript") || languages.includes("typescript");
  const lines = [
    `Run ${listLanguages(languages)} code in an isolated sandbox and get back the value of the last expression (like a REPL), everything printed to stdout/stderr, the files the code wrote in its working directory, and what it displayed: display(x) in Python (IPython's, with HTML, Markdown, Image) and JavaScript, a rich last value (images are shown to you).`,
    session === "none"
      ? "Every call starts from a clean state: nothing (variables, imports, files) survives to the next call, so send the whole program each time."
      : "State persists between calls, one session per language: variables, functions and imports from earlier calls stay available, so send only the new code. After a timeout, memory or crash error the session restarts empty." +
        (session === "named"
          ? " fork_session copies a session into a new one (its id comes back): pass that id as `session` to try something in the copy while the original stays as it was."
          : ""),
    network,
    `Limits per call: ${limits.timeoutMs} ms wall time, ${limits.memoryMb} MB memory, ${formatLimit(limits.maxOutputBytes)} of printed output (cut and marked beyond that), ${limits.maxFiles} output files.`,
  ];
  if (js) {
    lines.push(
      `JavaScript/TypeScript: QuickJS (ES2023) with top-level await, setTimeout/setInterval, queueMicrotask, the web platform's ${runtime}, and a global \`fs\` (readFileSync, writeFileSync, appendFileSync, existsSync, readdirSync, unlinkSync, mkdirSync; relative paths) for files; TypeScript types are stripped, not checked. No Node.js APIs (require, process, Buffer), no npm packages${network.startsWith("There is no network") ? ", no fetch" : ""}.`,
    );
  }
  if (languages.includes("python")) {
    // The package library is named only when it is mounted: a model told of packages it cannot import
    // writes code that fails.
    const library = packages?.length ? `, plus ${packages.join(", ")}` : "";
    lines.push(PYTHON_RUNTIME[pythonEngine](library));
  }
  lines.push(
    "On failure you get the error kind (syntax, runtime, timeout, memory, stack, output_limit, denied, crashed), the message and the line: fix the code and call again.",
  );
  if (notes) lines.push(notes);
  return lines.join("\n");
}

function listLanguages(languages: readonly Language[]): string {
  const names = languages.map((l) => ({ javascript: "JavaScript", typescript: "TypeScript", python: "Python" })[l]);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} or ${names.at(-1)!}`;
}

function formatLimit(bytes: number): string {
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}

/** JSON Schema for a zod input schema, without the `$schema` key some function-calling APIs reject. */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

/** One line per zod issue, `path: message`, in the words a model can act on. */
export function zodMessage(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys")
        return `unknown argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
      const path = issue.path.map(String).join(".");
      return path && !issue.message.startsWith(path) ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
