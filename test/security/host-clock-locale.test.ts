// Threat: the host's time zone and locale leak into the box. A guest that reads its local time or
// its default locale learns where the host runs (and its output varies with the host's settings),
// against "UTC and en-US, the box's, never the host's". The library runs in a child process started
// with a hostile host environment (India's time zone, a German locale); on every engine the guest
// must see offset 0, UTC names and en-US.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { runNode } from "../helpers/process.ts";

const index = pathToFileURL(new URL("../../src/index.ts", import.meta.url).pathname).href;
const HOST_ENV = { TZ: "Asia/Kolkata", LANG: "de_DE.UTF-8", LC_ALL: "de_DE.UTF-8", LC_TIME: "de_DE.UTF-8" };

const JS = `({
  offsets: [new Date(0).getTimezoneOffset(), new Date(Date.UTC(2024, 6, 1)).getTimezoneOffset()],
  hours: new Date(0).getHours(),
  localCtor: new Date(2024, 0, 1, 12).getTime() === Date.UTC(2024, 0, 1, 12),
  localParse: Date.parse("2024-01-01T12:00:00") === Date.UTC(2024, 0, 1, 12),
  string: new Date(0).toString(),
  locale: new Intl.NumberFormat().resolvedOptions().locale,
  fallback: [new Intl.NumberFormat("zz").resolvedOptions().locale, new Intl.Collator(["qq-ZZ"]).resolvedOptions().locale],
  timeZone: new Intl.DateTimeFormat().resolvedOptions().timeZone,
  formatted: [new Date(0).toLocaleString(), (1234.5).toLocaleString("zz")],
})`;

const PY = `
import time, datetime, locale
{
  "timezone": [time.timezone, time.altzone, time.daylight],
  "tzname": list(time.tzname),
  "hour": time.localtime(0).tm_hour,
  "gmtoff": time.localtime(0).tm_gmtoff,
  "astimezone": datetime.datetime.fromtimestamp(0).astimezone().utcoffset().total_seconds(),
  "mktime": time.mktime((2024, 1, 1, 12, 0, 0, 0, 1, -1)) == 1704110400,
  "locale": list(locale.getlocale()),
  "time": locale.setlocale(locale.LC_TIME, ""),
}`;

const SCRIPT = `
const { createSandbox } = await import(${JSON.stringify(index)});
const out = {};
for (const isolation of ["thread", "in-process"]) {
  const s = await createSandbox({ javascript: { isolation } });
  const r = await s.run({ language: "javascript", code: ${JSON.stringify(JS)} });
  out[isolation] = r.ok ? r.value : r.error;
  await s.close();
}
for (const engine of ["pyodide", "native"]) {
  const s = await createSandbox({ python: { engine } });
  const r = await s.run({ language: "python", engine, code: ${JSON.stringify(PY)}, limits: { timeoutMs: 30000 } });
  out[engine] = r.ok ? r.value : r.error;
  await s.close();
}
console.log(JSON.stringify(out));`;

describe("the host's time zone and locale stay outside the box", () => {
  let seen: Record<string, unknown> = {};
  before(async () => {
    const ran = await runNode(["--input-type=module", "-e", SCRIPT], { env: { ...process.env, ...HOST_ENV } });
    assert.equal(ran.code, 0, ran.stderr);
    seen = JSON.parse(ran.stdout.trim().split("\n").pop() ?? "{}") as Record<string, unknown>;
  });

  for (const isolation of ["thread", "in-process"]) {
    it(`javascript (${isolation}): UTC local time, en-US default and fallback`, () => {
      assert.deepEqual(seen[isolation], {
        offsets: [0, 0],
        hours: 0,
        localCtor: true,
        localParse: true,
        string: "Thu Jan 01 1970 00:00:00 GMT+0000",
        locale: "en-US",
        fallback: ["en-US", "en-US"],
        timeZone: "UTC",
        formatted: ["1/1/1970, 12:00:00 AM", "1,234.5"],
      });
    });
  }

  // Pyodide's environment names en_US.UTF-8 itself; the jail's names C.UTF-8. Neither is the host's.
  const boxLocale = { pyodide: "en_US.UTF-8", native: "C.UTF-8" };
  for (const engine of ["pyodide", "native"] as const) {
    it(`python (${engine}): UTC local time and the box's locale`, () => {
      const v = seen[engine] as Record<string, unknown>;
      assert.ok(v && !("kind" in v), JSON.stringify(v));
      assert.deepEqual(
        { ...v, tzname: undefined },
        {
          timezone: [0, 0, 0],
          tzname: undefined,
          hour: 0,
          gmtoff: 0,
          astimezone: 0,
          mktime: true,
          locale: ["en_US", "UTF-8"],
          time: boxLocale[engine],
        },
      );
      for (const name of v.tzname as string[]) assert.match(name, /^UTC/);
    });
  }
});
