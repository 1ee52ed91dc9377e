// Display items on their way out of the sidecar: the guest's display module (wasmcell_display.py,
// loaded by setup.py) writes each item to /dev/wasmcell-display (bridge.ts) and closes it; the item
// goes to the host as a `display` frame at once, so the caller's onResult sees it while the run goes.
// The host parses and counts every item (src/kit/display.ts): here only the bytes one open file may
// hold are bounded (the sidecar's own heap), and a file past them marks the run's item cap as passed.

import type { RunMessage } from "../protocol.ts";
import { send } from "./channel.ts";

export const display = {
  /** The current run's id. */
  id: 0,
  /** The most one item's JSON text may be, in bytes (JSON escapes a little: twice the item cap). */
  maxBytes: 0,
  /** An item was longer than that: the run fails with limits.maxDisplayItemBytes. */
  over: false,
};

/** Resets the display state for a new run. */
export function startDisplay(message: RunMessage): void {
  display.id = message.id;
  display.maxBytes = 2 * message.limits.maxDisplayItemBytes + (64 << 10);
  display.over = false;
}

/** One item's JSON text, as the guest wrote it, to the host. */
export function sendDisplay(text: string): void {
  send({ t: "display", id: display.id, item: text });
}
