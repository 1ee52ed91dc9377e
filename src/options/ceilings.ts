// What a request from someone other than the operator may ask for. The application that calls
// `sandbox.run` is the operator and sets any limit it likes; a queue job's author, an MCP client and a
// model calling a tool are not. Every face that runs their requests (the queue worker, the `run_code`
// and code-mode tools behind the AI SDK and MCP adapters and the HTTP server, the AI SDK sandbox
// session) builds the request here, from what was asked and what the operator offers:
//
// - each limit the operator set is a ceiling: a request may ask for less, never more; above it the
//   request is refused with an error naming the field, the value asked and the ceiling;
// - a limit the request leaves out is the operator's;
// - a Python engine the operator did not offer is refused (a job cannot move itself from Pyodide to
//   the native tier);
// - host functions are the operator's alone: a request that brings its own is refused;
// - the network a request asks for is passed on, and the front door narrows the operator's policy with
//   it (network/policy.ts narrowPolicy: hosts, methods and caps may only shrink, a request cannot add
//   a network the sandbox lacks). Input files are bounded by the run's maxFileBytes, which is itself
//   within its ceiling;
// - a `traceparent` is passed on: it only names the span the run's spans go under (the front door
//   parses it; an invalid one is ignored).

import { InvalidOptionError } from "../core/errors.ts";
import { PYTHON_ENGINES, type Limits, type PythonEngine, type RunRequest } from "../core/types.ts";
import { limitsSchema } from "./limits.ts";
import { fail, stripUndefined } from "./zod.ts";

/** What an operator lets a request from someone else use, resolved by makeOffer. */
export interface Offer {
  /** What a request gets for each limit it leaves out. */
  readonly defaults: Readonly<Limits>;
  /** The most a request may ask for, field by field (each at least its default). */
  readonly ceilings: Readonly<Limits>;
  /** The engine a Python request that names none runs on. */
  readonly pythonEngine: PythonEngine;
  /** The Python engines a request may name (`pythonEngine` among them). */
  readonly pythonEngines: readonly PythonEngine[];
}

/** The operator's settings for one face. */
export interface OfferSettings {
  /** The sandbox the face runs requests in (its resolved options). */
  sandbox: { limits: Limits; python: { engine: PythonEngine } };
  /** The face's limits for every request, over the sandbox's (a tool's `limits` option). */
  limits?: Partial<Limits> | undefined;
  /** The face's Python engine, over the sandbox's (a tool's `pythonEngine` option). */
  pythonEngine?: PythonEngine | undefined;
  /** Ceilings above the defaults, field by field (the queue worker's `maxLimits`). Default: the defaults. */
  maxLimits?: Partial<Limits> | undefined;
  /** Python engines a request may name (the queue worker's `pythonEngines`). Default: the face's engine only. */
  pythonEngines?: readonly PythonEngine[] | undefined;
}

/** A request as someone other than the operator makes it: data only. */
export type AskedRequest = Pick<
  RunRequest,
  "language" | "code" | "engine" | "files" | "limits" | "network" | "traceparent"
>;

/** Checks an operator's settings for a face; bad settings throw InvalidOptionError naming the option. */
export function makeOffer(settings: OfferSettings): Offer {
  const defaults = { ...settings.sandbox.limits, ...checkLimits(settings.limits, "limits") };
  const ceilings = { ...defaults, ...checkLimits(settings.maxLimits, "maxLimits") };
  for (const key of Object.keys(ceilings) as (keyof Limits)[]) {
    if (ceilings[key] < defaults[key])
      throw new InvalidOptionError(
        `maxLimits.${key}`,
        `is ${ceilings[key]}, below the ${defaults[key]} a request that asks for nothing gets (limits.${key}); raise it or lower that`,
      );
  }
  const pythonEngine = settings.pythonEngine ?? settings.sandbox.python.engine;
  const pythonEngines: unknown = settings.pythonEngines ?? [pythonEngine];
  if (!isEngineList(pythonEngines) || !pythonEngines.includes(pythonEngine))
    throw new InvalidOptionError(
      "pythonEngines",
      `must list Python engines ("pyodide", "native"), including "${pythonEngine}", which a request naming none gets`,
    );
  return Object.freeze({
    defaults: Object.freeze(defaults),
    ceilings: Object.freeze(ceilings),
    pythonEngine,
    pythonEngines: Object.freeze([...pythonEngines]),
  });
}

/**
 * The request to run for what someone other than the operator asked: their limits within the
 * ceilings, the operator's for the rest, an engine the operator offers. Anything past the offer throws
 * InvalidOptionError naming the field (`request.limits.memoryMb`, `request.engine`, …); the front door
 * checks the rest of the request (its shape, code and file sizes, the network's narrowing) as for any run.
 */
export function requestWithin(asked: AskedRequest, offer: Offer): RunRequest {
  if (typeof asked !== "object" || asked === null) throw new InvalidOptionError("request", "must be an object");
  for (const key of ["hostFunctions", "onOutput", "onResult", "signal"]) {
    if (key in asked)
      throw new InvalidOptionError(
        `request.${key}`,
        "is the operator's to give: a request from a queue job, a client or a model cannot bring its own",
      );
  }
  const wanted = checkLimits(asked.limits, "request.limits");
  for (const [key, value] of Object.entries(wanted) as [keyof Limits, number][]) {
    const ceiling = offer.ceilings[key];
    if (value > ceiling)
      throw new InvalidOptionError(
        `request.limits.${key}`,
        `is ${value}, above the ceiling of ${ceiling} the operator set; a request may ask for less, never more`,
      );
  }
  const request: RunRequest = { ...asked, limits: { ...offer.defaults, ...wanted } };
  if (asked.language === "python") {
    const engine = asked.engine ?? offer.pythonEngine;
    if (!(offer.pythonEngines as readonly string[]).includes(engine)) {
      const offered = offer.pythonEngines.map((e) => `"${e}"`).join(" or ");
      throw new InvalidOptionError(
        "request.engine",
        `"${engine}" is not offered here: Python runs on ${offered} (leave engine out for "${offer.pythonEngine}")`,
      );
    }
    request.engine = engine;
  }
  return request;
}

function isEngineList(value: unknown): value is readonly PythonEngine[] {
  return Array.isArray(value) && value.every((e) => PYTHON_ENGINES.includes(e as PythonEngine));
}

/** A partial limits object checked against the schema (shape and the schema's bounds), undefined fields dropped. */
function checkLimits(limits: Partial<Limits> | undefined, field: string): Partial<Limits> {
  if (limits === undefined) return {};
  const parsed = limitsSchema.safeParse(limits);
  if (!parsed.success) fail(field, parsed.error);
  return stripUndefined(limits);
}
