// The other Node.js versions the package supports, as npm ships them (the `node` package with its
// platform binary), installed once into .wasmcell-cache/node/<version>. They are not devDependencies:
// two packages that both install a `node` bin fight over node_modules/.bin/node, the pinned Node 26.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Every supported major besides the pinned 26, at the version tested. */
export const OTHER_NODES = ["22.23.3", "24.9.0"] as const;

/** The path of that Node's binary; installs it from npm the first time. Throws if npm cannot. */
export function nodeBinary(version: string): string {
  const dir = join(root, ".wasmcell-cache", "node", version);
  const bin = join(dir, "node_modules", "node", "bin", "node");
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  // The node package's install script fetches its platform binary package; npm 11 runs it only when allowed.
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, allowScripts: { node: true } }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", `node@${version}`], {
    cwd: dir,
    stdio: "ignore",
  });
  if (!existsSync(bin)) throw new Error(`npm installed node@${version} but ${bin} is missing`);
  return bin;
}
