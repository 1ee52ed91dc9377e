// The whole import graph of src/, type-only imports included, has no circle (the linter's
// import-x/no-cycle reads value imports only) and no import that runs back up the floors
// (eslint/layers.js FLOORS, which the lint zones are made from). Read with TypeScript's own pre-processor, so every
// import and export-from form counts, and a file's dependencies are what the compiler would follow.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { FLOORS } from "../../eslint/layers.js";

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

/** The floor (index in FLOORS) and room a file of src/ belongs to; every file has one. */
function floorOf(file: string): { floor: number; room: string } {
  const top = relative(join(root, "src"), file).split("/")[0]!;
  const floor = FLOORS.findIndex((f) => f.rooms.includes(top));
  assert.ok(floor >= 0, `${relative(root, file)} is in no floor of eslint/layers.js FLOORS`);
  return { floor, room: top };
}

/** Imports that point at a higher floor, or at another room of a floor whose rooms are apart. */
export function upward(g: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of g) {
    const from = floorOf(file);
    for (const dep of deps) {
      const to = floorOf(dep);
      const apart = to.floor === from.floor && FLOORS[from.floor]!.apart === true && to.room !== from.room;
      if (to.floor > from.floor || apart) out.push(`${relative(root, file)} -> ${relative(root, dep)}`);
    }
  }
  return out;
}

describe("the floors of src/", () => {
  it("no import, type-only ones included, runs back up the floor list", () => {
    assert.deepEqual(upward(graph(sources(join(root, "src")))), []);
  });

  it("docs/architecture.md tells the floors in FLOORS' order, with their rooms", () => {
    const doc = readFileSync(join(root, "docs/architecture.md"), "utf8");
    const list = /<!-- floors[^>]*-->\n([\s\S]*?)<!-- \/floors -->/.exec(doc)?.[1] ?? "";
    const told = list
      .split(/\n(?=\d+\. )/)
      .filter((item) => item.trim())
      .map((item) => ({
        name: /\*\*(.+?)\*\*/.exec(item)?.[1],
        apart: /\*\* \(apart\)/.test(item),
        rooms: [...(item.split(":")[0] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, "")),
      }));
    assert.deepEqual(
      told,
      FLOORS.map((f) => ({ name: f.name, apart: f.apart === true, rooms: f.rooms })),
    );
  });

  it("the check finds a planted upward import and one between rooms set apart", () => {
    const src = (p: string) => join(root, "src", p);
    const g = new Map([
      [src("kit/a.ts"), [src("core/b.ts")]],
      [src("core/b.ts"), [src("engines/c.ts")]],
      [src("stores/d.ts"), [src("network/e.ts")]],
    ]);
    assert.deepEqual(upward(g), ["src/core/b.ts -> src/engines/c.ts", "src/stores/d.ts -> src/network/e.ts"]);
  });
});
