// The house's layering, as lint rules: a change that breaks one fails `npm run lint`.
// Floors, from the bottom: the root floor (types, errors, options) → jail and pool (know nothing of
// engines) → engines (know nothing of adapters) → the front door (sandbox.ts) → adapters (reach
// engines only through the front door) → the CLI. Each rule says why it exists in its message;
// test/lint/invariants.test.ts lints a deliberate violation of each one.

const JAIL_INTERNALS = {
  group: ["**/jail/*", "!**/jail/index.ts"],
  message: "outside src/jail, import the jail through jail/index.ts (its one public surface)",
};
const UPWARD = (floor, names) => ({
  group: names.flatMap((n) => [`**/${n}/**`, `**/${n}.ts`]),
  message: `${floor} must not import a higher floor (${names.join(", ")}): the layering is one-way`,
});

/** One config block per room; a file matches at most one block, so no block's options override another's. */
/** @type {import("eslint").Linter.Config[]} */
export const layers = [
  {
    files: ["src/jail/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            UPWARD("the jail", ["engines", "pool", "adapters", "cli", "sandbox"]),
            { group: ["../index.ts"], message: "the jail knows nothing of the package root" },
          ],
        },
      ],
    },
  },
  {
    files: ["src/pool/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [UPWARD("the pool", ["engines", "jail", "adapters", "cli", "sandbox"])] },
      ],
    },
  },
  {
    files: ["src/engines/**/*.ts"],
    ignores: ["src/engines/pyodide/sidecar/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [UPWARD("an engine", ["adapters", "cli", "sandbox"]), JAIL_INTERNALS] },
      ],
    },
  },
  {
    // The sidecar runs inside the jail under Node's permission model, which allows reading only its own
    // folder (bound and allowed as a whole, src/engines/pyodide/launch.ts): a value import of anything
    // else fails there at load time. "./" only: a file in the folder importing "../x" is outside it.
    files: ["src/engines/pyodide/sidecar/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!node:|\\./)",
              allowTypeImports: true,
              message:
                "the sidecar may import only node:* modules, its own folder, and types (it runs with a read allowlist)",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/adapters/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/engines/**", "**/jail/**", "**/pool/**"],
              message: "adapters reach engines only through the front door (sandbox.ts): they translate, nothing more",
            },
            UPWARD("an adapter", ["cli"]),
          ],
        },
      ],
    },
  },
  {
    // The queue is adapter-like: it carries requests between machines and runs them through the front
    // door, so an engine's internals never leak into what crosses Redis.
    files: ["src/queue/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/engines/**", "**/jail/**", "**/pool/**"],
              message: "the queue reaches engines only through the front door (sandbox.ts, index.ts)",
            },
            UPWARD("the queue", ["cli"]),
          ],
        },
      ],
    },
  },
  {
    files: ["src/sandbox.ts", "src/index.ts", "src/edge.ts", "src/public.ts", "src/cli/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [JAIL_INTERNALS] }] },
  },
  {
    files: ["src/*.ts"],
    ignores: ["src/sandbox.ts", "src/index.ts", "src/edge.ts", "src/public.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            JAIL_INTERNALS,
            UPWARD("the root floor", ["engines", "jail", "pool", "adapters", "cli", "sandbox"]),
          ],
        },
      ],
    },
  },
];
