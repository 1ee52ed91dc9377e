// The guest source and host bindings of each family, by name (the table in table.ts says which
// families exist and when they are installed).

import type { FamilySource } from "./family.ts";
import type { FamilyName } from "./table.ts";
import { blob } from "./blob.ts";
import { clone } from "./clone.ts";
import { console } from "./console.ts";
import { crypto } from "./crypto.ts";
import { display } from "./display.ts";
import { dom } from "./dom.ts";
import { encoding } from "./encoding.ts";
import { intl } from "./intl.ts";
import { performance } from "./performance.ts";
import { url } from "./url.ts";
import { FETCH_GUEST_SOURCE } from "../fetch-guest.ts";

export type { FamilySource } from "./family.ts";

export const FAMILY_SOURCES: Record<FamilyName, FamilySource> = {
  dom,
  console,
  encoding,
  blob,
  clone,
  performance,
  url,
  crypto,
  intl,
  display,
  // Its host side is the run's own bridge (fetch.ts), not a static binding: see installFetchBridge.
  fetch: { source: FETCH_GUEST_SOURCE },
};

/** The object the families share. `makeError` builds the exceptions host bindings throw. */
export const INTERNALS_SOURCE = String.raw`(function () {
"use strict";
var ctors = { TypeError: TypeError, RangeError: RangeError, SyntaxError: SyntaxError, Error: Error, ReferenceError: ReferenceError };
// Captured before any user code runs (a lazily installed family may start after user code replaced them).
var internals = { DOMException: undefined, parseJSON: JSON.parse, stringify: JSON.stringify };
internals.makeError = function (name, message) {
  if (Object.prototype.hasOwnProperty.call(ctors, name)) return new ctors[name](message);
  if (internals.DOMException) return new internals.DOMException(message, name);
  var e = new Error(message); e.name = name; return e;
};
return internals;
})()`;
