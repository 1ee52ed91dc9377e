// A local ESLint rule: an entry module (the package root, by default src/index.ts) must not pull in a
// Node-only module through its static value imports, however deep, because edge runtimes and browsers
// load the package root and have no `node:` modules. Type-only imports and dynamic `import()` are not
// followed (types are erased; dynamic imports are how engines load lazily). The rule reads the import
// graph from disk with the TypeScript parser, so it sees past the file being linted, and reports the
// whole chain from the entry to the offending import.

import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";

/** Static value imports of one file: relative targets (resolved) and bare specifiers. */
function valueImports(file) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const out = [];
  for (const node of source.statements) {
    let spec;
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      // `import type {…}` and imports whose every binding is `type` vanish at run time.
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      if (
        clause &&
        !clause.name &&
        named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly)
      )
        continue;
      spec = node.moduleSpecifier;
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      spec = node.moduleSpecifier;
    }
    if (spec && ts.isStringLiteral(spec))
      out.push({ text: spec.text, line: source.getLineAndCharacterOfPosition(spec.getStart(source)).line + 1 });
  }
  return out;
}

/** Node-only: a `node:` builtin, or a builtin named without the prefix (`fs`, `fs/promises`). */
function isNodeOnly(specifier) {
  return specifier.startsWith("node:") || BUILTINS.has(specifier) || BUILTINS.has(specifier.split("/")[0]);
}
const BUILTINS = new Set(builtinModules);

/** The first chain from `entry` to a Node-only import, or undefined. */
function nodeOnlyChain(entry, extraForbidden = []) {
  const seen = new Set();
  const stack = [{ file: resolve(entry), chain: [] }];
  while (stack.length > 0) {
    const { file, chain } = stack.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    let imports;
    try {
      imports = valueImports(file);
    } catch {
      continue; // a file that does not exist is reported by the type checker, not here
    }
    for (const imp of imports) {
      const link = `${file}:${imp.line} → ${imp.text}`;
      if (isNodeOnly(imp.text) || extraForbidden.includes(imp.text)) return [...chain, link];
      if (imp.text.startsWith(".")) stack.push({ file: resolve(dirname(file), imp.text), chain: [...chain, link] });
    }
  }
  return undefined;
}

/** @type {import("eslint").Rule.RuleModule} */
const edgeCleanRule = {
  meta: {
    type: "problem",
    docs: { description: "an edge entry module must not statically import a Node-only module, however deep" },
    schema: [
      {
        type: "object",
        properties: { forbid: { type: "array", items: { type: "string" } } },
        additionalProperties: false,
      },
    ],
    messages: {
      nodeOnly: "this entry must load on edge runtimes, but it statically reaches a Node-only module: {{chain}}",
    },
  },
  create(context) {
    return {
      Program(node) {
        const chain = nodeOnlyChain(context.filename, context.options[0]?.forbid ?? []);
        if (!chain) return;
        const cwd = context.cwd;
        const pretty = chain.map((step) => step.replace(/^(\/[^:]+)/, (p) => relative(cwd, p))).join(", then ");
        context.report({ node, messageId: "nodeOnly", data: { chain: pretty } });
      },
    };
  },
};

/** @type {import("eslint").ESLint.Plugin} */
const plugin = { rules: { "edge-clean": edgeCleanRule } };
export default plugin;
