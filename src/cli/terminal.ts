// What the CLI writes to a terminal: guest text made safe to show (its own room so that run.ts and
// events.ts can both use it without importing each other).

/**
 * Guest text bound for a terminal, with control characters shown as `\xNN` instead of sent: escape
 * sequences could otherwise retitle the window, write the clipboard (OSC 52) or repaint the screen.
 * Pipes and files get the bytes unchanged.
 */
export function forTerminal(stream: NodeJS.WritableStream, text: string): string {
  if ((stream as NodeJS.WriteStream).isTTY !== true) return text;
  // Matching control characters is the point of this expression.
  const controls = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g; // eslint-disable-line no-control-regex
  return text.replace(controls, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
