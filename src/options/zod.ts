// What every options room shares: turning a zod issue into an InvalidOptionError that names the
// field, and dropping the fields a caller left undefined before defaults are merged.

import type { z } from "zod";
import { InvalidOptionError } from "../core/errors.ts";

/** Turns the first zod issue into an InvalidOptionError naming the field path. */
export function fail(prefix: string, error: z.ZodError): never {
  let issue = error.issues[0];
  // `false | {...}` fields: report what is wrong with the object (the last branch), not "invalid input".
  while (issue?.code === "invalid_union" && issue.errors.length > 0) {
    const branch = issue.errors[issue.errors.length - 1]?.[0];
    if (!branch) break;
    issue = { ...branch, path: [...issue.path, ...branch.path] };
  }
  if (!issue) throw new InvalidOptionError(prefix || "options", "invalid");
  let path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  let message = issue.message;
  if (issue.code === "unrecognized_keys") {
    path = [path, issue.keys[0]].filter(Boolean).join(".");
    message = "unknown option";
  }
  throw new InvalidOptionError(path || "options", message);
}

export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `T` as zod's `.partial()` infers it: every field optional and also `undefined`. */
export type AsParsed<T> = { [K in keyof T]?: T[K] | undefined };

/**
 * `true` exactly when `A` and `B` are the same type. `const tied: Same<…> = true` beside a schema makes
 * the type checker refuse an interface and a schema that have drifted apart (a field added to one).
 */
export type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
