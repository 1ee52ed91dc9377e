// What the JavaScript box provides beyond the language, for the front door to tell a model: the guest
// runtime's own table, so the description cannot drift from what runs get. Its own entry so that the
// front door names the JavaScript engine's public surface, not the interpreter's internals, and loads
// nothing of the thread pool (the edge build has none).

export { describeRuntime, SEALED } from "../lib/quickjs/runtime/table.ts";
