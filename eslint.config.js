// Lint rules: typescript-eslint's type-aware recommended set, the few rules that catch the mistakes a
// sandbox cannot afford (floating promises leak runs past their deadline; a non-exhaustive switch over
// an error kind silently drops a new kind), and the house's layering (eslint/layers.js: which room may
// import which; eslint/edge-clean.js: the package root reaches nothing Node-only).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import wasmcell from "./eslint/edge-clean.js";
import { layers } from "./eslint/layers.js";

export default tseslint.config(
  // examples/code/ holds guest programs (run inside cells), not host code. The runtime examples
  // (Workers, browser, Deno, Bun) import the published package and are checked by running them in
  // their runtimes (test/edge/), not by the type-aware lint.
  {
    ignores: [
      "dist/",
      "node_modules/",
      "coverage/",
      "**/*.d.ts",
      "examples/code/",
      "examples/cloudflare-worker/",
      "examples/browser/",
      "examples/deno/",
      "examples/bun/",
      "test/edge/fixtures/",
      // The guest-side WPT harness: guest code, run inside the box, not host code.
      "test/conformance/harness/",
      "bench/edge/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["*.js"] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `void promise` does not count as handled: a promise nobody awaits must say what happens when it
      // rejects (`.catch(…)`, or `.then(ok, onError)`). An unhandled rejection ends the host process,
      // and every tenant's runs and sessions with it; a guest-reachable one was how a remote server
      // could do that.
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: false }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
    },
  },
  ...layers,
  { files: ["src/index.ts", "src/edge.ts"], plugins: { wasmcell }, rules: { "wasmcell/edge-clean": "error" } },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts", "eslint/*.js"],
    rules: {
      "@typescript-eslint/no-floating-promises": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
);
