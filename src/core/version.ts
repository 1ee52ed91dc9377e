// The package's own version, read once from package.json (src/ and dist/ are both one level below
// the package root). For the CLI's --version, the MCP server's info and the setup manifest: one
// reading, so the three cannot disagree. Node-only (it reads a file): the edge entry never imports it.

import { readFileSync } from "node:fs";

let version: string | undefined;
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  return version;
}
