// Lint rules: typescript-eslint's type-aware recommended set, plus the few rules that catch the
// mistakes a sandbox cannot afford (floating promises leak runs past their deadline).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "scripts/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/only-throw-error": "off",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts"],
    rules: {
      "@typescript-eslint/no-floating-promises": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
);
