// The house's layering, as lint rules: a change that breaks one fails `npm run lint`.
import importX from "eslint-plugin-import-x";

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

/**
 * No import circles in src/: a circle means two rooms that cannot be understood (or tested, or moved)
 * one without the other. import-x reads value imports; test/lint/import-graph.test.ts reads the whole
 * graph, type-only imports included.
 * @type {import("eslint").Linter.Config}
 */
export const noCycles = {
  files: ["src/**/*.ts"],
  plugins: { "import-x": importX },
  settings: {
    "import-x/resolver-next": [importX.createNodeResolver()],
    "import-x/extensions": [".ts", ".js"],
    "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
  },
  rules: { "import-x/no-cycle": ["error", { ignoreExternal: true }] },
};

/**
 * A run's deadline is made in one place (src/kit/deadline.ts): no other file turns
 * `timeoutMs` into a point in time by adding it to a clock. The sidecar is exempt: it runs inside the
 * jail with only its own folder, so it cannot import the Deadline.
 * @type {import("eslint").Linter.Config}
 */
export const oneDeadline = {
  files: ["src/**/*.ts"],
  ignores: ["src/kit/deadline.ts", "src/engines/pyodide/sidecar/**"],
  rules: {
    "no-restricted-syntax": [
      "error",
      {
        selector:
          "BinaryExpression[operator=/^([-+<>]|<=|>=)$/]:has(MemberExpression[property.name='timeoutMs']):has(CallExpression:matches([callee.property.name='now'], [callee.name='now']))",
        message:
          "a deadline is made by `new Deadline(timeoutMs)` (src/kit/deadline.ts), never by adding timeoutMs to a clock",
      },
    ],
  },
};

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
    // The network gate and proxy serve every engine and know none: they take a policy and a deadline.
    files: ["src/network/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)(engines/|jail/|pool/|adapters/|cli/|setup/|library/|stores/|sandbox\\.ts$)",
              message:
                "the network floor must not import a higher floor (engines, jail, pool, adapters, cli, sandbox, setup, library, stores): the layering is one-way",
            },
            {
              group: ["**/options.ts", "**/options/**"],
              message: "the network floor sits below the options: they import it",
            },
          ],
        },
      ],
    },
  },
  {
    // The package library and the cache, which the engines mount and read: below the engines.
    files: ["src/library/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [UPWARD("the package library", ["engines", "adapters", "cli", "sandbox"]), JAIL_INTERNALS] },
      ],
    },
  },
  {
    // The setup command builds the Pyodide snapshot and checks the native python3: above the engines,
    // below the CLI and the adapters.
    files: ["src/setup/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [UPWARD("the setup command", ["adapters", "cli"]), JAIL_INTERNALS] },
      ],
    },
  },
  {
    // Session stores keep opaque blobs: they know nothing of the engines that make them.
    files: ["src/stores/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [UPWARD("a session store", ["engines", "adapters", "cli", "sandbox"]), JAIL_INTERNALS] },
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
    // The CLI is the top floor: it may use any room, the jail only through its public surface.
    files: ["src/sandbox.ts", "src/index.ts", "src/edge.ts", "src/public.ts", "src/cli/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [JAIL_INTERNALS] }] },
  },
  {
    // The kit every engine, the network gate, the queue and the front door share: below all of them.
    files: ["src/kit/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            JAIL_INTERNALS,
            UPWARD("the kit", [
              "engines",
              "jail",
              "pool",
              "adapters",
              "cli",
              "sandbox",
              "options",
              "network",
              "stores",
              "library",
              "setup",
              "queue",
            ]),
          ],
        },
      ],
    },
  },
  {
    files: ["src/core/**/*.ts", "src/options/**/*.ts"],
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
  noCycles,
  oneDeadline,
];
