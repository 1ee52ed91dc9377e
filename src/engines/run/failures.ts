// What every engine says when a run fails for a reason the host decides: one wording per kind, so a
// model reads the same sentence whichever engine ran its code. Imports only the ground floor.

/** A host-side error (never a guest value) as one line for a message or an event: `Name: message`. */
export function describeHostError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
