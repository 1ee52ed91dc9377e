// deploy/Dockerfile is not built here (no Docker on the test machine), so its steps are checked against
// what CI runs (.ci/run) and what the server promises: the same system packages for the sealed tiers
// (matplotlib among them: the run_code description names it), the same `setup` and `setup --check`,
// and nothing installed by hand that the package should bring itself.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
// Continuation lines joined, comments dropped: one logical line per instruction / shell command.
const logical = (text: string) =>
  text
    .split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .join("\n")
    .replace(/\\\n/g, " ");
const dockerfile = logical(read("deploy/Dockerfile"));
const ci = logical(read(".ci/run"));

/** The packages of every `apt-get install` in the text. */
function aptPackages(text: string): Set<string> {
  const packages = new Set<string>();
  for (const [, args] of text.matchAll(/apt-get install ([^&;\n>]+)/g))
    for (const word of args!.trim().split(/\s+/)) if (!word.startsWith("-")) packages.add(word);
  return packages;
}

/** The arguments of every `… cli/main.(ts|js) setup …` command, as strings. */
function setupCommands(text: string): Set<string> {
  return new Set([...text.matchAll(/cli\/main\.[jt]s (setup(?: --[a-z-]+)*)/g)].map((m) => m[1]!));
}

describe("deploy/Dockerfile matches CI", () => {
  it("installs every system package CI installs for the sealed tiers, matplotlib included", () => {
    const image = aptPackages(dockerfile);
    // CI's first install line is the sealed tiers' (the others are test tools: openssl, haproxy, chromium).
    const [sealed] = [...ci.matchAll(/apt-get install ([^&;\n>]+)/g)];
    const wanted = [...aptPackages(sealed![0])];
    assert.ok(wanted.includes("python3-matplotlib"));
    assert.deepEqual(
      wanted.filter((p) => !image.has(p)),
      [],
    );
    assert.ok(image.has("ca-certificates"));
  });

  it("runs setup and setup --check, as CI does", () => {
    const ciSetup = setupCommands(ci);
    assert.deepEqual([...ciSetup].sort(), ["setup", "setup --check"]);
    const image = setupCommands(dockerfile);
    for (const command of ciSetup)
      assert.ok(image.has(command), `the image runs \`${command}\`: ${[...image].join(", ")}`);
  });

  it("installs only the packed wasmcell: its dependencies (the MCP SDK among them) come with it", () => {
    assert.match(dockerfile, /npm install --omit=dev [^\n]*wasmcell-\*\.tgz/);
    assert.doesNotMatch(dockerfile, /@modelcontextprotocol/);
  });

  it("installs the queue's optional peers beside it, at package.json's ranges (the image runs workers)", () => {
    assert.match(dockerfile, /npm install --omit=dev [^\n]*wasmcell-\*\.tgz \$\(cat \/tmp\/pkg\/queue-peers\.txt\)/);
    assert.match(dockerfile, /require\('\.\/package\.json'\)\.peerDependencies; \['bullmq', 'ioredis'\]/);
    const { peerDependencies } = JSON.parse(read("package.json")) as { peerDependencies: Record<string, string> };
    assert.ok(peerDependencies.bullmq && peerDependencies.ioredis);
  });
});
