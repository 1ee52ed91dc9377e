// Intl and toLocaleString against Node's ICU for the same inputs (the box's defaults, en-US and UTC,
// are set for Node here too).
import { describe } from "node:test";
import { parity } from "./parity.ts";

describe("Intl behaves like Node's", () => {
  parity([
    [
      "NumberFormat styles",
      `[new Intl.NumberFormat("en-US").format(1234567.891), new Intl.NumberFormat("de-DE", { style: "currency", currency: "EUR" }).format(1234.5), new Intl.NumberFormat("en-IN").format(12345678), new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 }).format(0.1234), new Intl.NumberFormat("en", { notation: "compact" }).format(1234567), new Intl.NumberFormat("en", { style: "unit", unit: "kilometer-per-hour" }).format(50)]`,
    ],
    [
      "NumberFormat edge values",
      `[new Intl.NumberFormat().format(NaN), new Intl.NumberFormat().format(-Infinity), new Intl.NumberFormat().format(-0), new Intl.NumberFormat().format(12345678901234567890n), new Intl.NumberFormat().format("1234.5000000000000001")]`,
    ],
    [
      "NumberFormat format is bound",
      `[1, 22, 333].map(new Intl.NumberFormat("en", { minimumIntegerDigits: 3 }).format)`,
    ],
    [
      "NumberFormat formatToParts and resolvedOptions",
      `(() => { const f = new Intl.NumberFormat("fr-FR", { style: "currency", currency: "USD" }); return [f.formatToParts(-1.5), f.resolvedOptions().locale, f.resolvedOptions().currency]; })()`,
    ],
    ["NumberFormat bad option is a RangeError", `new Intl.NumberFormat("en", { style: "currency" })`],
    ["NumberFormat bad locale is a RangeError", `new Intl.NumberFormat("not a locale!")`],
    [
      "DateTimeFormat with timeZone",
      `(() => { const d = new Date(Date.UTC(2024, 2, 10, 7, 30)); return [new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", dateStyle: "full", timeStyle: "long" }).format(d), new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Kolkata", hour: "2-digit", minute: "2-digit" }).format(d), new Intl.DateTimeFormat("ja-JP", { timeZone: "Asia/Tokyo" }).format(d)]; })()`,
    ],
    ["DateTimeFormat defaults to UTC and en-US", `new Intl.DateTimeFormat().format(new Date(0))`],
    [
      "DateTimeFormat formatToParts and timeZoneName",
      `new Intl.DateTimeFormat("en-US", { timeZone: "Europe/Berlin", timeZoneName: "short", hour: "numeric" }).formatToParts(Date.UTC(2024, 6, 1, 12))`,
    ],
    [
      "DateTimeFormat formatRange",
      `new Intl.DateTimeFormat("en", { dateStyle: "medium", timeZone: "UTC" }).formatRange(new Date(Date.UTC(2024, 0, 1)), new Date(Date.UTC(2024, 0, 5)))`,
    ],
    ["DateTimeFormat bad timeZone is a RangeError", `new Intl.DateTimeFormat("en", { timeZone: "Mars/Olympus" })`],
    ["DateTimeFormat of an invalid date is a RangeError", `new Intl.DateTimeFormat().format(new Date(NaN))`],
    [
      "DateTimeFormat resolvedOptions",
      `(() => { const o = new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Tokyo" }).resolvedOptions(); return [o.timeZone, o.locale, o.calendar]; })()`,
    ],
    [
      "Collator",
      `[["b", "a", "C", "ä", "z"].sort(new Intl.Collator("en").compare), ["b", "a", "C", "ä", "z"].sort(new Intl.Collator("sv").compare), new Intl.Collator("en", { sensitivity: "base" }).compare("a", "A"), ["10", "9", "2"].sort(new Intl.Collator(undefined, { numeric: true }).compare)]`,
    ],
    ["localeCompare uses the collator", `["b", "a", "B", "é", "e"].sort((x, y) => x.localeCompare(y))`],
    [
      "PluralRules",
      `[new Intl.PluralRules("en").select(1), new Intl.PluralRules("en").select(2), new Intl.PluralRules("en", { type: "ordinal" }).select(2), new Intl.PluralRules("ar").select(3), new Intl.PluralRules("pl").select(5)]`,
    ],
    [
      "RelativeTimeFormat",
      `[new Intl.RelativeTimeFormat("en").format(-1, "day"), new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(-1, "day"), new Intl.RelativeTimeFormat("es").format(3, "hours"), new Intl.RelativeTimeFormat("en", { style: "short" }).formatToParts(2, "month")]`,
    ],
    ["RelativeTimeFormat bad unit is a RangeError", `new Intl.RelativeTimeFormat("en").format(1, "fortnight")`],
    [
      "ListFormat and DisplayNames",
      `[new Intl.ListFormat("en", { type: "conjunction" }).format(["a", "b", "c"]), new Intl.ListFormat("de", { type: "disjunction" }).format(["x", "y"]), new Intl.DisplayNames(["en"], { type: "region" }).of("DE"), new Intl.DisplayNames("fr", { type: "language" }).of("en-US")]`,
    ],
    [
      "Number toLocaleString",
      `[(1234567.891).toLocaleString(), (1234.5).toLocaleString("de-DE"), (0.256).toLocaleString("en", { style: "percent" }), (1e21).toLocaleString(), (-0).toLocaleString(), NaN.toLocaleString(), (5).toLocaleString("en", { style: "currency", currency: "JPY" })]`,
    ],
    ["BigInt toLocaleString", `[(123456789012345678901234567890n).toLocaleString(), (1234n).toLocaleString("de")]`],
    [
      "Date toLocaleString and friends",
      `(() => { const d = new Date(Date.UTC(2024, 11, 31, 23, 59, 58)); return [d.toLocaleString(), d.toLocaleDateString(), d.toLocaleTimeString(), d.toLocaleString("en-US", { timeZone: "Asia/Tokyo" }), d.toLocaleDateString("de-DE", { weekday: "long", year: "numeric", month: "long", day: "numeric" }), d.toLocaleTimeString("en-GB", { timeZone: "America/Los_Angeles" }), new Date(NaN).toLocaleString()]; })()`,
    ],
    ["Array toLocaleString", `[1234.5, new Date(0)].toLocaleString()`],
    ["getCanonicalLocales", `Intl.getCanonicalLocales(["en-us", "DE"])`],
  ]);
});
