// The whole import graph of src/, type-only imports included, has no circle (the linter's
// import-x/no-cycle reads value imports only). Read with TypeScript's own pre-processor, so every
// import and export-from form counts, and a file's dependencies are what the compiler would follow.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : [];
  });
}

/** Files each file imports (relative specifiers that name a file in the tree). */
function graph(files: string[]): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const deps = info.importedFiles
      .map((f) => f.fileName)
      .filter((s) => s.startsWith("."))
      .map((s) => resolve(dirname(file), s))
      .filter((p) => existsSync(p));
    g.set(file, deps);
  }
  return g;
}

/** Strongly connected components with more than one file (Tarjan). */
export function circles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        on.delete(w);
        comp.push(w);
        if (w === v) break;
      }
      if (comp.length > 1 || (g.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe("the import graph of src/", () => {
  it("has no circle, type-only imports included", () => {
    const found = circles(graph(sources(join(root, "src")))).map((c) => c.map((f) => relative(root, f)));
    assert.deepEqual(found, []);
  });

  it("the check finds a planted type-only circle", () => {
    const g = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["a.ts"]],
      ["c.ts", ["a.ts"]],
    ]);
    assert.deepEqual(circles(g), [["a.ts", "b.ts"]]);
  });
});
