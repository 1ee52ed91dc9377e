// The documents whose examples are executed: README.md and every docs/*.md. A ```ts block right after a
// `<!-- test:run -->` line runs as its own ES module; each is named by its file and line.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** README.md, then docs/*.md in name order: path relative to the checkout, and the text. */
export function documents(): Array<{ path: string; text: string }> {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs].map((path) => ({ path, text: readFileSync(join(root, path), "utf8") }));
}

/** Every executed example: where it is (`docs/python.md line 12`) and its code. */
export function examples(): Array<{ where: string; code: string }> {
  const out: Array<{ where: string; code: string }> = [];
  for (const doc of documents()) {
    for (const m of doc.text.matchAll(/<!-- test:run -->\s*\n```ts\n([\s\S]*?)\n```/g)) {
      out.push({ where: `${doc.path} line ${doc.text.slice(0, m.index).split("\n").length}`, code: m[1]! });
    }
  }
  return out;
}
