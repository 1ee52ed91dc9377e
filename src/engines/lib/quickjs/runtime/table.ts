// The one table of what the guest's runtime provides: each global family, the names it defines, how
// the engine tells that a program may use it, the capability it depends on, and the short line the
// `run_code` tool description shows the model. The installer (install.ts) and the tool description
// (src/adapters/tools/run-code.ts) both read this table, so what the model is told cannot drift from
// what the guest gets.
//
// Where each family runs, and why (the threat is always guest code that is hostile):
//
// | family      | where                         | why                                                              |
// |-------------|-------------------------------|------------------------------------------------------------------|
// | console     | guest JS + host print         | formatting stays in the service realm; output goes through the    |
// |             |                               | run's caps (maxOutputBytes) like console.log                      |
// | dom         | guest JS                      | DOMException, Event, EventTarget, AbortController/Signal: pure    |
// |             |                               | state machines, nothing to ask the host                           |
// | encoding    | guest JS                      | TextEncoder/TextDecoder (UTF-8, UTF-16LE), atob/btoa: pure byte   |
// |             |                               | arithmetic; a host call would only add a copy                     |
// | blob        | guest JS                      | Blob/File are immutable bytes in the guest heap (counted against  |
// |             |                               | the memory limit like any typed array); nothing to ask the host   |
// | clone       | guest JS                      | structuredClone walks guest values; it must never hand them out   |
// | performance | guest JS over Date.now()      | no new clock: 1 ms steps, monotonic, no finer than Date.now()     |
// |             |                               | already gives (no high-resolution timer for side channels)        |
// | url         | host URL, strings in and out  | the WHATWG parser (IDNA, hosts, percent-encoding) is large and    |
// |             |                               | subtle; the host's is exact. Only strings cross, bounded in size  |
// | crypto      | host, bytes in and out        | randomness must come from the host's CSPRNG (QuickJS has none);   |
// |             |                               | SHA-1/2 and HMAC run on host bytes with a bounded input size; the |
// |             |                               | key never leaves the guest's CryptoKey except for the one call    |
// | fetch       | guest JS over the run's bridge| Headers/Request/Response are guest objects; every request is a    |
// |             | (network only)                | host call into the run's gated fetch (src/network/), data only    |
// | intl        | host Intl, JSON data in/out   | QuickJS has no ICU. Locales, options and values are copied as     |
// |             |                               | primitives (bounded), formatters are cached per context (bounded),|
// |             |                               | results come back as strings/JSON; no host object is ever handed  |
// |             |                               | out. Default locale en-US and time zone UTC: the box's, not the   |
// |             |                               | host's (which would leak host configuration)                      |
// | display     | guest JS, one JSON string out | the bundle is built in the guest; the host parses it with the one |
// |             |                               | display parser and counts it against the run's display caps       |
//
// Every host call is synchronous, data-only (strings, numbers, bytes), bounded in size, and counted
// per context (see platform.ts). A family may depend on a capability (`when`): `fetch` is present only
// when the network is granted.

export interface RuntimeCaps {
  /** The run may reach the network (a family like fetch is present only then). */
  network: boolean;
}

/** What a run has until a capability exists and is granted: no network. */
export const SEALED: RuntimeCaps = { network: false };

export type FamilyName =
  "dom" | "console" | "encoding" | "blob" | "clone" | "performance" | "url" | "crypto" | "intl" | "display" | "fetch";

export interface FamilyEntry {
  name: FamilyName;
  /** The globals it defines. */
  globals: readonly string[];
  /** Methods it adds to or replaces on existing objects (dotted paths from the global object). */
  patches?: readonly string[];
  /** A program that matches may use the family (a miss only ever removes a capability). */
  detect: RegExp;
  /** Families whose internals this one uses; installed first. */
  requires?: readonly FamilyName[];
  /** Needs the host timers (setTimeout) installed before it. */
  timers?: boolean;
  /** Present only when this returns true for the run's capabilities. */
  when?: (caps: RuntimeCaps) => boolean;
  /** One short phrase for the tool description. */
  describe: string;
}

export const FAMILIES: readonly FamilyEntry[] = [
  {
    name: "dom",
    globals: ["DOMException", "Event", "CustomEvent", "EventTarget", "AbortController", "AbortSignal"],
    detect: /DOMException|Event|Abort/,
    timers: true,
    describe: "Event/EventTarget, AbortController/AbortSignal (timeout, any)",
  },
  {
    name: "console",
    globals: [],
    patches: [
      "console.assert",
      "console.count",
      "console.countReset",
      "console.time",
      "console.timeEnd",
      "console.timeLog",
      "console.group",
      "console.groupCollapsed",
      "console.groupEnd",
      "console.trace",
      "console.table",
    ],
    detect: /console\s*\.\s*(?:assert|table|time|count|group|trace|dir)|console\s*\[/,
    describe: "console (log, error, assert, table, time, count, group, dir, trace)",
  },
  {
    name: "encoding",
    globals: ["TextEncoder", "TextDecoder", "atob", "btoa"],
    detect: /TextEncoder|TextDecoder|atob|btoa/,
    requires: ["dom"],
    describe: "TextEncoder/TextDecoder, atob/btoa",
  },
  {
    name: "blob",
    globals: ["Blob", "File"],
    detect: /Blob|\.blob\s*\(|\bFile\b/,
    requires: ["dom", "encoding"],
    describe: "Blob, File (slice, text, arrayBuffer, bytes; no stream())",
  },
  {
    name: "clone",
    globals: ["structuredClone"],
    detect: /structuredClone/,
    requires: ["dom"],
    describe: "structuredClone",
  },
  {
    name: "performance",
    globals: ["performance"],
    detect: /performance|console\s*\.\s*time/,
    describe: "performance.now() (1 ms steps)",
  },
  { name: "url", globals: ["URL", "URLSearchParams"], detect: /URL/, describe: "URL, URLSearchParams" },
  {
    name: "crypto",
    globals: ["crypto", "Crypto", "SubtleCrypto", "CryptoKey"],
    detect: /[Cc]rypto/,
    requires: ["dom"],
    describe: "crypto.getRandomValues, crypto.randomUUID, crypto.subtle (digest SHA-1/256/384/512, HMAC)",
  },
  {
    name: "intl",
    globals: ["Intl"],
    patches: [
      "Number.prototype.toLocaleString",
      "BigInt.prototype.toLocaleString",
      "Date.prototype.toLocaleString",
      "Date.prototype.toLocaleDateString",
      "Date.prototype.toLocaleTimeString",
      "String.prototype.localeCompare",
    ],
    detect: /Intl|toLocale|localeCompare/,
    describe:
      "Intl (NumberFormat, DateTimeFormat with timeZone, Collator, PluralRules, RelativeTimeFormat, ListFormat), toLocaleString; default locale en-US, time zone UTC",
  },
  {
    name: "display",
    globals: ["display"],
    detect: /display/,
    describe:
      'display(value) shows a rich item (objects as JSON; an object\'s [Symbol.for("Jupyter.display")]() bundle); display({"text/html": ...}, { raw: true }) a MIME bundle',
  },
  {
    name: "fetch",
    globals: ["fetch", "Request", "Response", "Headers", "FormData"],
    detect: /fetch|Request|Response|Headers|FormData/,
    // URL: requests and Response.redirect parse their URLs, and formData() reads an urlencoded body,
    // with the host's WHATWG parser (as Fetch says). dom: a Request's signal is always an AbortSignal.
    // TextEncoder only when present.
    requires: ["dom", "url"],
    when: (caps) => caps.network,
    describe: "fetch, Request, Response, Headers (to the hosts the application allows)",
  },
];

/**
 * Globals the box does not provide, and what to say when code reaches for one. A family that becomes
 * available under a capability takes the name out of this list for that run (see absentGlobals).
 */
const ABSENT: readonly { name: string; advice: string }[] = [
  {
    name: "require",
    advice:
      "the sandbox has no module loader (no require, no import of packages); use the globals it provides, e.g. fs for files",
  },
  {
    name: "process",
    advice: "there is no Node.js process object here (no env, argv, exit); return a value or print instead",
  },
  { name: "Buffer", advice: "Buffer is Node-only; use Uint8Array with TextEncoder/TextDecoder, atob/btoa" },
  { name: "__dirname", advice: "there is no module path here; files are relative paths in the working directory" },
  { name: "__filename", advice: "there is no module path here; files are relative paths in the working directory" },
  { name: "module", advice: "this is not a CommonJS module; the value of the last expression is the result" },
  { name: "exports", advice: "this is not a CommonJS module; use `export default` or the last expression" },
  {
    name: "fetch",
    advice: "this sandbox has no network access unless the application grants it (then fetch is provided)",
  },
  { name: "XMLHttpRequest", advice: "there is no network access in this sandbox" },
  { name: "WebSocket", advice: "there is no network access in this sandbox" },
  { name: "window", advice: "this is not a browser; the global object is globalThis" },
  { name: "document", advice: "this is not a browser: there is no DOM" },
  { name: "navigator", advice: "this is not a browser: there is no navigator" },
  { name: "Deno", advice: "this is not Deno; use the web-platform globals the sandbox provides" },
  { name: "Bun", advice: "this is not Bun; use the web-platform globals the sandbox provides" },
];

/** Advice for a reference to `name` that the box does not define, or undefined when it has none. */
export function absentGlobalAdvice(name: string): string | undefined {
  // A name some family defines was simply not granted to this run (e.g. fetch without network).
  return ABSENT.find((a) => a.name === name)?.advice;
}

/** The families present under `caps`, in table order. */
export function familiesFor(caps: RuntimeCaps, table: readonly FamilyEntry[] = FAMILIES): readonly FamilyEntry[] {
  return table.filter((f) => !f.when || f.when(caps));
}

/** The families a program may use (all of them when `everything`), with what they require, in order. */
export function familiesNeeded(
  code: string,
  caps: RuntimeCaps,
  everything: boolean,
  table: readonly FamilyEntry[] = FAMILIES,
): FamilyName[] {
  const present = familiesFor(caps, table);
  const wanted = new Set<FamilyName>();
  const add = (name: FamilyName): void => {
    if (wanted.has(name)) return;
    const entry = present.find((f) => f.name === name);
    if (!entry) return;
    for (const r of entry.requires ?? []) add(r);
    wanted.add(name);
  };
  for (const f of present) if (everything || f.detect.test(code)) add(f.name);
  // Table order is dependency order (a family only requires ones listed before it).
  return present.filter((f) => wanted.has(f.name)).map((f) => f.name);
}

/** The entry of a family. */
export function familyEntry(name: FamilyName): FamilyEntry {
  const entry = FAMILIES.find((f) => f.name === name);
  if (!entry) throw new Error(`wasmcell: no runtime family ${name}`);
  return entry;
}

/** Whether any of `names` needs host timers. */
export function familiesNeedTimers(names: readonly FamilyName[]): boolean {
  return names.some((n) => FAMILIES.find((f) => f.name === n)?.timers === true);
}

/** One line for the tool description: what the JavaScript box provides beyond the language. */
export function describeRuntime(caps: RuntimeCaps): string {
  return familiesFor(caps)
    .map((f) => f.describe)
    .join("; ");
}
