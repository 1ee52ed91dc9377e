// examples/browser in headless Chromium (Debian's chromium, driven by playwright-core): the page
// bundled with the browser condition, served from 127.0.0.1, runs JavaScript and TypeScript in the tab;
// a runaway loop is a timeout result and the page goes on working. Chromium missing is a failure in CI.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { bundle, QUICKJS_WASM } from "./bundle.ts";

const CHROMIUM = "/usr/bin/chromium";
const missing = !existsSync(CHROMIUM);
if (missing && !process.env.CI)
  console.log(`# skipping the browser test: ${CHROMIUM} is not installed (apt-get install chromium)`);

describe("browser example (headless Chromium)", { skip: missing && !process.env.CI && "no chromium" }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;

  before(async () => {
    assert.ok(!missing, `${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
    const files: Record<string, [string, string | Buffer]> = {
      "/": ["text/html", readFileSync(new URL("../../examples/browser/index.html", import.meta.url))],
      "/main.js": ["text/javascript", await bundle("examples/browser/main.js", ["browser"])],
      "/quickjs.wasm": ["application/wasm", QUICKJS_WASM],
    };
    server = createServer((req, res) => {
      const file = files[req.url ?? ""];
      res.writeHead(file ? 200 : 404, { "content-type": file?.[0] ?? "text/plain" });
      res.end(file?.[1] ?? "not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    // playwright gives the browser a new empty profile of its own; the flags keep it off the network.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForSelector("#run:not([disabled])", { timeout: 60_000 });
  });
  after(async () => {
    await browser?.close();
    server?.close();
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
