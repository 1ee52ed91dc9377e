// The project stands alone: every document a comment cites is in this checkout. A comment in src/,
// test/, bench/, scripts/, eslint/ or examples/ that names a Markdown file or a repository path
// (src/…, test/…, docs/…) must name one that exists, every "pitfall N" must be a pitfall that
// docs/seal.md lists, and nothing may point at the design folders beside the checkout.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tracked = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  cwd: root,
  encoding: "utf8",
})
  .split("\0")
  .filter(Boolean);
const sources = tracked.filter((f) => /^(src|test|bench|scripts|eslint|examples)\/.*\.(ts|js|mjs|py)$/.test(f));

/** The comment text of each line: after `//`, `#` (Python), or inside a block comment. */
function comments(file: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const marker = file.endsWith(".py") ? /(?:^|\s)#(.*)$/ : /(?:\/\/|^\s*\*|\/\*)(.*)$/;
  readFileSync(join(root, file), "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = marker.exec(text);
      if (m) out.push({ line: i + 1, text: m[1]! });
    });
  return out;
}

const MARKDOWN = /(?<![\w/.-])((?:\.\.?\/)*(?:[\w@-][\w.@-]*\/)*[\w-][\w.-]*\.md)\b/g;
const REPO_PATH = /(?<![\w/.-])((?:src|test|docs|bench|scripts|eslint|examples|\.ci)\/[\w./-]*[\w/])/g;

function exists(from: string, ref: string): boolean {
  const candidates = [normalize(join(dirname(from), ref)), normalize(ref)];
  return candidates.some((c) => existsSync(join(root, c))) || tracked.some((t) => t.endsWith(`/${ref}`));
}

describe("comments cite only what is in the repository", () => {
  const sealing = readFileSync(join(root, "docs/seal.md"), "utf8");
  const pitfalls = new Set([...sealing.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1])));

  it("docs/seal.md lists its pitfalls", () => {
    assert.ok(pitfalls.size >= 10, `found ${pitfalls.size}`);
  });

  it("every cited file exists, every pitfall is listed, nothing points outside the checkout", () => {
    const problems: string[] = [];
    for (const file of sources) {
      for (const { line, text } of comments(file)) {
        const at = `${file}:${line}`;
        if (/\.\.\/shared\b|shared\/(research|seeds|design)|research notes?\b/.test(text))
          problems.push(`${at}: points outside the repository: ${text.trim()}`);
        for (const m of text.matchAll(MARKDOWN))
          if (!exists(file, m[1]!)) problems.push(`${at}: cites ${m[1]}, which is not in the checkout`);
        for (const m of text.matchAll(REPO_PATH))
          if (!/[*X]/.test(m[1]!) && !existsSync(join(root, m[1]!)))
            problems.push(`${at}: names ${m[1]}, which does not exist`);
        for (const m of text.matchAll(/\bpitfalls? (\d+)/gi))
          if (!pitfalls.has(Number(m[1]))) problems.push(`${at}: pitfall ${m[1]} is not in docs/seal.md`);
        if (/§\s*\d/.test(text)) problems.push(`${at}: a § reference to a document that has no numbered sections`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
