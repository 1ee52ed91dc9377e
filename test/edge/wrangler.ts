// `wrangler dev` for the Workers tests: the example, installed as a user installs wasmcell (a package
// in node_modules, so wrangler's own bundler picks the build by export condition), run by wrangler
// from npm on 127.0.0.1 with the compatibility date and flags given on its command line. Offline:
// no telemetry, no `Request.cf` download, no update check (wrangler makes those by default).
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const WRANGLER = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const START_DEADLINE_MS = 90_000;

/** A fresh project holding examples/cloudflare-worker, with wasmcell as a dependency; wrangler.toml without a date. */
export function workerProject(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-wrangler-"));
  const example = join(root, "examples", "cloudflare-worker");
  cpSync(join(example, "src"), join(dir, "src"), { recursive: true });
  const config = readFileSync(join(example, "wrangler.toml"), "utf8");
  writeFileSync(join(dir, "wrangler.toml"), config.replace(/^compatibility_date\s*=.*$/m, ""));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(root, join(dir, "node_modules", "wasmcell"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { wasmcell: "*" } }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function wranglerEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NO_COLOR: "1",
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_HIDE_BANNER: "true",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    XDG_CONFIG_HOME: join(dir, ".config"),
  };
}

/** Compatibility settings as wrangler's command line takes them; no date = wrangler's default. */
export interface Compat {
  date?: string;
  flags?: string[];
}

export function compatArgs({ date, flags = [] }: Compat): string[] {
  return [...(date ? [`--compatibility-date=${date}`] : []), ...flags.map((f) => `--compatibility-flags=${f}`)];
}

export interface DevServer {
  url: string;
  /** Everything wrangler printed so far, for assertion messages. */
  log: () => string;
  stop: () => Promise<void>;
}

/** `wrangler dev` on a free loopback port; resolves once it says Ready, rejects with its output if it exits first. */
export function wranglerDev(dir: string, compat: Compat): Promise<DevServer> {
  const args = [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", "0", "--inspector-port", "0"];
  const child = spawn(process.execPath, [...args, "--show-interactive-dev-session=false", ...compatArgs(compat)], {
    cwd: dir,
    env: wranglerEnv(dir),
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: wrangler starts workerd, and stop() ends both by the group's id.
    detached: true,
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    const fail = (why: string) => void stop().then(() => reject(new Error(`wrangler dev ${why}:\n${output}`)));
    const timer = setTimeout(() => fail(`did not start in ${START_DEADLINE_MS} ms`), START_DEADLINE_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /Ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (ready?.[1]) {
        clearTimeout(timer);
        resolve({ url: ready[1], log: () => output, stop });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      fail(`exited (${child.exitCode ?? child.signalCode})`);
    });
  });
}
