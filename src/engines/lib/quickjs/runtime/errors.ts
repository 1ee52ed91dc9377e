// Error messages that say what is missing. QuickJS reports a failed call as just "not a function"; V8
// names the callee ("console.assert is not a function"), and that name is what a model needs to fix
// its code. QuickJS puts the error's position on the call's "(" (or a tagged template's "`"), so the
// callee is the member expression just before it in the user's own source — read back from there.
// A reference to a global the box does not provide gets a sentence on what to use instead.
//
// Only the message text changes: the error kind stays the host's verdict, and a message the guest
// forged ("not a function" thrown by hand) at worst gains a wrong name, never a capability.

import { absentGlobalAdvice } from "./table.ts";

const MAX_CALLEE = 80;

export interface ErrorSite {
  name: string;
  message: string;
  /** The user's source as QuickJS ran it (positions match), and its file name in stacks. */
  code: string;
  filename: string;
  /** The QuickJS stack; its first frame must be in the user's file for a callee to be named. */
  stack: string | undefined;
}

/** The 1-based position of the innermost frame, if that frame is the user's code (not native, not ours). */
function userPosition(site: ErrorSite): { line: number; column: number } | undefined {
  const first = (site.stack ?? "").split("\n").find((l) => l.trim() !== "");
  const m = first ? /\(([^()]*):(\d+):(\d+)\)\s*$/.exec(first) : null;
  if (!m || m[1] !== site.filename) return undefined;
  return { line: Number(m[2]), column: Number(m[3]) };
}

/** The message to report for an uncaught error. */
export function explainError(site: ErrorSite): string {
  const { name, message } = site;
  if (name === "TypeError" && (message === "not a function" || message === "not a constructor")) {
    const callee = calleeAt(site);
    if (callee) return callee.construct ? `${callee.text} is not a constructor` : `${callee.text} is not a function`;
    return message;
  }
  if (name === "ReferenceError") {
    const m = /^'([\w$]+)' is not defined$/.exec(message);
    const advice = m?.[1] ? absentGlobalAdvice(m[1]) : undefined;
    if (m?.[1] && advice) return `${m[1]} is not defined: ${advice}`;
  }
  return message;
}

/** The callee expression that ends just before the call at the error's position, if it can be read. */
function calleeAt(site: ErrorSite): { text: string; construct: boolean } | undefined {
  const pos = userPosition(site);
  if (!pos) return undefined;
  const lines = site.code.split("\n");
  const lineText = lines[pos.line - 1];
  if (lineText === undefined) return undefined;
  // Work on the text up to the error, across earlier lines (a call chain can span lines).
  const before = lines.slice(0, pos.line - 1).join("\n") + (pos.line > 1 ? "\n" : "") + lineText;
  const at = before.length - lineText.length + pos.column - 1;
  const ch = before[at];
  if (ch !== "(" && ch !== "`") return undefined;
  let i = at - 1;
  const parts: string[] = [];
  const skipSpace = () => {
    while (i >= 0 && /\s/.test(before[i] ?? "")) i--;
  };
  skipSpace();
  for (;;) {
    const c = before[i] ?? "";
    if (/[\w$]/.test(c)) {
      let j = i;
      while (j >= 0 && /[\w$]/.test(before[j] ?? "")) j--;
      parts.unshift(before.slice(j + 1, i + 1));
      i = j;
    } else if (c === "]" || c === ")") {
      const open = c === "]" ? "[" : "(";
      let depth = 0;
      let j = i;
      for (; j >= 0; j--) {
        const d = before[j];
        if (d === c) depth++;
        else if (d === open && --depth === 0) break;
      }
      if (j < 0) return undefined;
      // V8 writes a string-literal key as a property: o['k'] → o.k.
      const key = c === "]" ? /^\[\s*(['"])([A-Za-z_$][\w$]*)\1\s*\]$/.exec(before.slice(j, i + 1)) : null;
      parts.unshift(key ? `.${key[2]}` : c === "]" ? before.slice(j, i + 1) : "(...)");
      i = j - 1;
      skipSpace();
      // A member or call group follows its object directly: `a.b[0]`, `f()`.
      if (/[\w$\])]/.test(before[i] ?? "")) continue;
    } else break;
    skipSpace();
    const dot = before[i];
    if (dot === "." && before[i - 1] === "?") {
      parts.unshift("?.");
      i -= 2;
    } else if (dot === ".") {
      parts.unshift(".");
      i--;
    } else if (before[i] !== "]" && before[i] !== ")") break;
    skipSpace();
  }
  const text = parts.join("");
  if (!text || /^[.?]/.test(text) || /^\(/.test(text) || text.length > MAX_CALLEE) return undefined;
  if (/^\d/.test(text)) return undefined;
  const construct =
    site.message === "not a constructor" || /(?:^|[^\w$.])new\s*$/.test(before.slice(Math.max(0, i - 8), i + 1));
  return { text, construct };
}
