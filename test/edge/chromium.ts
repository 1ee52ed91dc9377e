// Headless Chromium (Debian's chromium, driven by playwright-core) opening a page served from
// 127.0.0.1: shared by the browser example's test and the edge bench (bench/edge.ts).
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why Chromium cannot be started here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`;
}

export interface OpenPage {
  page: Page;
  close(): Promise<void>;
}

/** Serves `files` (URL path → [content type, body]) on 127.0.0.1 and opens "/" in a fresh headless Chromium. */
export async function openPage(files: Record<string, [string, string | Buffer]>): Promise<OpenPage> {
  const server: Server = createServer((req, res) => {
    const file = files[req.url ?? ""];
    res.writeHead(file ? 200 : 404, { "content-type": file?.[0] ?? "text/plain" });
    res.end(file?.[1] ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await new Promise((resolve) => server.close(resolve));
  };
  try {
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
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    return { page, close };
  } catch (error) {
    await close();
    throw error;
  }
}
