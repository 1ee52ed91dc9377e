// examples/browser in headless Chromium (Debian's chromium, driven by playwright-core): the page
// bundled with the browser condition, served from 127.0.0.1, runs JavaScript and TypeScript in the tab;
// a runaway loop is a timeout result and the page goes on working. Chromium missing is a failure in CI.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { bundle, QUICKJS_WASM } from "./bundle.ts";
import { chromiumMissing, openPage, type OpenPage } from "./chromium.ts";

const missing = chromiumMissing();
if (missing && !process.env.CI) console.log(`# skipping the browser test: ${missing}`);

describe("browser example (headless Chromium)", { skip: missing && !process.env.CI && "no chromium" }, () => {
  let opened: OpenPage | undefined;
  let page: Page;

  before(async () => {
    assert.ok(!missing, `${missing}: .ci/run installs Debian's chromium`);
    opened = await openPage({
      "/": ["text/html", readFileSync(new URL("../../examples/browser/index.html", import.meta.url))],
      "/main.js": ["text/javascript", await bundle("examples/browser/main.js", ["browser"])],
      "/quickjs.wasm": ["application/wasm", QUICKJS_WASM],
    });
    page = opened.page;
    await page.waitForSelector("#run:not([disabled])", { timeout: 60_000 });
  });
  after(async () => {
    await opened?.close();
  });

  const runInPage = async (language: string, code: string): Promise<string> => {
    await page.selectOption("#language", language);
    await page.fill("#code", code);
    // These callbacks run in the page (the project's types carry no DOM library).
    await page.evaluate("document.getElementById('output').textContent = ''");
    await page.click("#run");
    await page.waitForFunction("document.getElementById('output').textContent !== ''", null, { timeout: 30_000 });
    return (await page.textContent("#output")) ?? "";
  };

  it("runs JavaScript and TypeScript in the tab", async () => {
    assert.equal(await runInPage("javascript", "console.log('hi'); [1, 2, 3].map((x) => x * 2)"), "hi\nvalue: [2,4,6]");
    assert.equal(await runInPage("typescript", "const n: number = 41;\nn + 1"), "value: 42");
  });

  it("a runaway loop is a timeout result, and the page goes on", async () => {
    assert.match(await runInPage("javascript", "while (true) {}"), /^error: timeout/);
    assert.match(await runInPage("javascript", "null.x"), /^error: runtime: /);
    assert.equal(await runInPage("javascript", "'still here'"), 'value: "still here"');
  });
});
