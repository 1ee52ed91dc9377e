// The house's layering, as lint rules: a change that breaks one fails `npm run lint`.
/* global URL */
import { fileURLToPath } from "node:url";
import importX from "eslint-plugin-import-x";

/**
 * The floors of src/, from the bottom. A file may import its own floor and the floors below it, never
 * one above; rooms of an `apart` floor know nothing of each other either. This list is the one
 * statement of the order: the lint zones below are made from it, test/lint/import-graph.test.ts checks
 * the whole graph (type-only imports included) against it, and docs/architecture.md tells it.
 */
export const FLOORS = [
  {
    name: "the ground",
    rooms: ["core"],
    holds: "shapes, the one error hierarchy, the event channel, paths, the value codec",
  },
  {
    name: "the kit",
    rooms: ["kit"],
    holds:
      "what every runner shares: the deadline and its graces, the host's verdicts, scope, serial, lifecycle, output and file caps, traces",
  },
  {
    name: "the services",
    rooms: ["network", "pool", "stores"],
    apart: true,
    holds: "the network gate and proxy, the warm pool and admission gate, session stores",
  },
  { name: "the options", rooms: ["options"], holds: "every option, its default and its schema" },
  { name: "the jail", rooms: ["jail"], holds: "the process seal (it reads its settings from the options)" },
  {
    name: "the package library",
    rooms: ["library"],
    holds: "the pinned Python library's lock, cache, install tree and checks",
  },
  {
    name: "the engines",
    rooms: ["engines"],
    holds: "the engines behind engines/engine.ts, the session life, the interpreters they share",
  },
  {
    name: "the setup command",
    rooms: ["setup"],
    holds: "`wasmcell setup`: installs the library and builds the Pyodide boot image",
  },
  {
    name: "the front door",
    rooms: ["sandbox.ts", "index.ts", "edge.ts", "public.ts"],
    holds: "one entry per platform",
  },
  {
    name: "the adapters",
    rooms: ["adapters", "queue"],
    apart: true,
    holds: "agent frameworks, MCP, the queue: they translate, through the front door",
  },
  { name: "the commands", rooms: ["cli"], holds: "the `wasmcell` command" },
];

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const path = (room) => (room.endsWith(".ts") ? `src/${room}` : `src/${room}/**`);
const RESOLVER = {
  "import-x/resolver-next": [importX.createNodeResolver()],
  "import-x/extensions": [".ts", ".js"],
  "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
};

/** One zone per (floor, higher floor) and per pair of rooms of an `apart` floor. */
function zones() {
  const out = [];
  FLOORS.forEach((floor, i) => {
    const above = FLOORS.slice(i + 1);
    for (const room of floor.rooms) {
      for (const higher of above)
        out.push({
          target: path(room),
          from: higher.rooms.map(path),
          message: `${floor.name} (${room}) must not import ${higher.name} (${higher.rooms.join(", ")}): the floors are one-way (eslint/layers.js FLOORS)`,
        });
      if (floor.apart)
        for (const other of floor.rooms.filter((r) => r !== room))
          out.push({
            target: path(room),
            from: [path(other)],
            message: `${room} and ${other} are rooms of ${floor.name}, which know nothing of each other`,
          });
    }
  });
  // The adapters translate: they reach engines, the jail and the pool only through the front door.
  for (const room of ["adapters", "queue"])
    out.push({
      target: path(room),
      from: ["src/engines/**", "src/jail/**", "src/pool/**"],
      message: `${room} reaches engines only through the front door (sandbox.ts, index.ts): it translates, nothing more`,
    });
  return out;
}

const JAIL_INTERNALS = {
  group: ["**/jail/*", "!**/jail/index.ts"],
  message: "outside src/jail, import the jail through jail/index.ts (its one public surface)",
};

/**
 * No import circles in src/: a circle means two rooms that cannot be understood (or tested, or moved)
 * one without the other. import-x reads value imports; test/lint/import-graph.test.ts reads the whole
 * graph, type-only imports included.
 * @type {import("eslint").Linter.Config}
 */
export const noCycles = {
  files: ["src/**/*.ts"],
  plugins: { "import-x": importX },
  settings: RESOLVER,
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

/** The floors, the jail's one surface, and the sidecar's read allowlist. */
/** @type {import("eslint").Linter.Config[]} */
export const layers = [
  {
    files: ["src/**/*.ts"],
    plugins: { "import-x": importX },
    settings: RESOLVER,
    rules: { "import-x/no-restricted-paths": ["error", { basePath: ROOT, zones: zones() }] },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/jail/**", "src/engines/pyodide/sidecar/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [JAIL_INTERNALS] }] },
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
  noCycles,
  oneDeadline,
];
