/* global process, console */
// Fails loudly when npm scripts are not running on the Node pinned in devDependencies.
// npm 11 flags the `node` package's install script; if it was skipped, node_modules/.bin/node is
// missing and scripts would silently run on whatever node the machine has.
const major = Number(process.versions.node.split(".")[0]);
if (major !== 26) {
  console.error(
    `wasmcell: npm scripts must run on the pinned Node 26 (node_modules/.bin/node), but this is Node ${process.versions.node}.\n` +
      `Run \`npm ci\` and check that the "node" devDependency's install script ran (see "allowScripts" in package.json).`,
  );
  process.exit(1);
}
