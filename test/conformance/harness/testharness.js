// A minimal testharness.js for web-platform-tests, run INSIDE the box (guest code, not host code): the
// part of WPT's harness API that .any.js files use (test, async_test, promise_test, setup, the assert_*
// family, Test#step/step_func/step_func_done/unreached_func/step_timeout/add_cleanup) plus shims of
// the two /common/ helpers the vendored files load (subset-tests-by-key.js: every subset runs;
// sab.js: createBuffer) and a `fetch` of the resource files the runner passes through `files` (the
// box's fetch is off unless the network is granted, and a test's data file is not network).
// Upstream's testharness.js reaches for `document`, `self.location`, message ports and a DOM output
// pane at load; this one reaches for nothing outside the ECMAScript built-ins and the runtime under test.
// The runner appends the test file (evaluated by an indirect eval, so a throw at load is a harness
// error, not a lost run) and `await __wpt.finish()`, whose value is the run's value.
(function () {
  var G = globalThis;
  var tests = [];
  var queue = []; // promise_tests run one after another, as upstream runs them
  var harnessErrors = [];
  var PASS = 0, FAIL = 1, TIMEOUT = 2, NOTRUN = 3;
  var DEFAULT_TIMEOUT = 4000;
  var explicitDone = false, markDone, doneCalled = new Promise(function (resolve) { markDone = resolve; });

  function AssertionError(message) { this.message = message; this.name = "AssertionError"; }
  AssertionError.prototype = Object.create(Error.prototype);

  function format_value(v) {
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "symbol") return String(v);
    if (v === 0 && 1 / v < 0) return "-0";
    if (typeof v === "bigint") return v + "n";
    if (Array.isArray(v)) return "[" + v.map(format_value).join(", ") + "]";
    try { return String(v); } catch (e) { return "[unprintable]"; }
  }
  function fail(desc, text) { throw new AssertionError((desc ? desc + ": " : "") + text); }
  function same(a, b) { return Object.is(a, b); }

  function assert_true(v, d) { if (v !== true) fail(d, "expected true got " + format_value(v)); }
  function assert_false(v, d) { if (v !== false) fail(d, "expected false got " + format_value(v)); }
  function assert_equals(a, e, d) { if (!same(a, e)) fail(d, "expected " + format_value(e) + " but got " + format_value(a)); }
  function assert_not_equals(a, e, d) { if (same(a, e)) fail(d, "got disallowed value " + format_value(a)); }
  function assert_in_array(a, arr, d) { if (arr.indexOf(a) === -1) fail(d, "value " + format_value(a) + " not in array " + format_value(arr)); }
  function assert_array_equals(a, e, d) {
    if (typeof a !== "object" || a === null || !("length" in a)) fail(d, "value is " + format_value(a) + ", expected array");
    if (a.length !== e.length) fail(d, "lengths differ, expected array " + format_value(e) + " length " + e.length + ", got " + format_value(a) + " length " + a.length);
    for (var i = 0; i < e.length; i++) {
      if (!same(a[i], e[i])) fail(d, "expected property " + i + " to be " + format_value(e[i]) + " but got " + format_value(a[i]));
    }
  }
  function assert_array_approx_equals(a, e, eps, d) {
    if (a.length !== e.length) fail(d, "lengths differ");
    for (var i = 0; i < e.length; i++) assert_approx_equals(a[i], e[i], eps, d);
  }
  function assert_approx_equals(a, e, eps, d) { if (typeof a !== "number" || Math.abs(a - e) > eps) fail(d, "expected " + e + " +/- " + eps + " but got " + format_value(a)); }
  function assert_less_than(a, e, d) { if (!(a < e)) fail(d, "expected a number less than " + e + " but got " + format_value(a)); }
  function assert_greater_than(a, e, d) { if (!(a > e)) fail(d, "expected a number greater than " + e + " but got " + format_value(a)); }
  function assert_less_than_equal(a, e, d) { if (!(a <= e)) fail(d, "expected a number <= " + e + " but got " + format_value(a)); }
  function assert_greater_than_equal(a, e, d) { if (!(a >= e)) fail(d, "expected a number >= " + e + " but got " + format_value(a)); }
  function assert_between_inclusive(a, lo, hi, d) { if (!(a >= lo && a <= hi)) fail(d, "expected a number between " + lo + " and " + hi + " but got " + format_value(a)); }
  function assert_regexp_match(a, re, d) { if (!re.test(a)) fail(d, "expected " + format_value(a) + " to match " + re); }
  function assert_class_string(o, cls, d) {
    var got = Object.prototype.toString.call(o);
    if (got !== "[object " + cls + "]") fail(d, "expected [object " + cls + "] but got " + got);
  }
  function assert_own_property(o, p, d) { if (!Object.prototype.hasOwnProperty.call(o, p)) fail(d, "expected property " + format_value(p) + " missing"); }
  function assert_not_own_property(o, p, d) { if (Object.prototype.hasOwnProperty.call(o, p)) fail(d, "unexpected property " + format_value(p) + " is found on object"); }
  function assert_inherits(o, p, d) {
    if (typeof o !== "object" && typeof o !== "function") fail(d, "provided value is not an object");
    if (Object.prototype.hasOwnProperty.call(o, p)) fail(d, "property " + p + " found on object, expected in prototype chain");
    if (!(p in o)) fail(d, "property " + p + " not found in prototype chain");
  }
  function assert_idl_attribute(o, p, d) { assert_inherits(o, p, d); }
  function assert_readonly(o, p, d) {
    var before = o[p];
    try { o[p] = before + "a"; } catch (e) { /* strict-mode throw is also read-only */ }
    if (!same(o[p], before)) fail(d, "changing property " + p + " succeeded");
  }
  function assert_unreached(d) { fail(d, "reached unreachable code"); }
  function assert_implements(c, d) { if (!c) throw new OptionalFeatureUnsupported(d); }
  function assert_implements_optional(c, d) { if (!c) throw new OptionalFeatureUnsupported(d); }
  function OptionalFeatureUnsupported(message) { this.message = message; }

  function thrown(fn) {
    try { fn(); } catch (e) { return { e: e }; }
    return null;
  }
  function assert_throws_js(ctor, fn, d) {
    var t = thrown(fn);
    if (!t) fail(d, "function " + String(fn).slice(0, 60) + " did not throw");
    if (!(t.e instanceof ctor) || t.e.constructor !== ctor) fail(d, "expected a " + ctor.name + " but got " + format_value(t.e && t.e.name) + " (" + format_value(t.e && t.e.message) + ")");
  }
  var DOM_CODES = { IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5, NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25 };
  var CODE_NAMES = {};
  for (var k in DOM_CODES) CODE_NAMES[DOM_CODES[k]] = k;
  function checkDom(e, type, ctor, d) {
    var name = typeof type === "number" ? CODE_NAMES[type] : type;
    if (typeof e !== "object" || e === null) fail(d, "expected a DOMException " + name + " but got " + format_value(e));
    if (e.name !== name) fail(d, "expected a DOMException named " + name + " but got " + format_value(e.name) + " (" + format_value(e.message) + ")");
    var C = ctor || G.DOMException;
    if (!(e instanceof C)) fail(d, "thrown " + name + " is not a DOMException");
    if (name in DOM_CODES && e.code !== DOM_CODES[name]) fail(d, "code of " + name + " is " + e.code);
  }
  function assert_throws_dom(type, a, b, c) {
    var ctor = typeof a === "function" && typeof b === "function" ? a : null;
    var fn = ctor ? b : a;
    var d = ctor ? c : b;
    var t = thrown(fn);
    if (!t) fail(d, "function did not throw");
    checkDom(t.e, type, ctor, d);
  }
  function assert_throws_exactly(v, fn, d) {
    var t = thrown(fn);
    if (!t) fail(d, "function did not throw");
    if (!same(t.e, v)) fail(d, "expected " + format_value(v) + " to be thrown but got " + format_value(t.e));
  }
  // The pre-2019 form some older files still use: assert_throws(new TypeError(), fn) or ("Name", fn).
  function assert_throws(kind, fn, d) {
    var t = thrown(fn);
    if (!t) fail(d, "function did not throw");
    if (kind === null) return;
    var name = typeof kind === "string" ? kind : kind.name;
    if (!t.e || t.e.name !== name) fail(d, "expected " + name + " but got " + format_value(t.e && t.e.name));
  }
  function promise_rejects_js(test, ctor, p, d) {
    return p.then(function () { fail(d, "promise resolved, expected rejection"); }, function (e) {
      if (!(e instanceof ctor) || e.constructor !== ctor) fail(d, "expected a " + ctor.name + " but got " + format_value(e && e.name));
    });
  }
  function promise_rejects_dom(test, type, a, b) {
    var ctor = typeof a === "function" && typeof a.then !== "function" ? a : null;
    var p = ctor ? b : a;
    return p.then(function () { fail("", "promise resolved, expected rejection"); }, function (e) { checkDom(e, type, ctor, ""); });
  }
  function promise_rejects_exactly(test, v, p, d) {
    return p.then(function () { fail(d, "promise resolved, expected rejection"); }, function (e) {
      if (!same(e, v)) fail(d, "expected " + format_value(v) + " but got " + format_value(e));
    });
  }

  function Test(name, props) {
    this.name = name;
    this.status = NOTRUN;
    this.message = null;
    this.phase = "started";
    this.cleanups = [];
    this.timers = [];
    this.resolve = null;
    this.properties = props || {};
    tests.push(this);
  }
  Test.prototype.step = function (fn, self) {
    if (this.phase === "done") return undefined;
    var args = Array.prototype.slice.call(arguments, 2);
    try {
      return fn.apply(self === undefined ? this : self, args);
    } catch (e) {
      this.failWith(e);
      return undefined;
    }
  };
  Test.prototype.step_func = function (fn, self) {
    var t = this;
    return function () {
      return t.step.apply(t, [fn, self === undefined ? this : self].concat(Array.prototype.slice.call(arguments)));
    };
  };
  Test.prototype.step_func_done = function (fn, self) {
    var t = this;
    return function () {
      if (fn) t.step.apply(t, [fn, self === undefined ? this : self].concat(Array.prototype.slice.call(arguments)));
      t.done();
    };
  };
  Test.prototype.unreached_func = function (d) {
    return this.step_func(function () { assert_unreached(d); });
  };
  Test.prototype.step_timeout = function (fn, ms) {
    var t = this;
    var args = Array.prototype.slice.call(arguments, 2);
    var id = setTimeout(function () { t.step.apply(t, [fn, t].concat(args)); }, ms);
    this.timers.push(id);
    return id;
  };
  Test.prototype.step_wait_func = function (cond, fn, d, timeout, interval) {
    var t = this, waited = 0, limit = timeout || 3000, every = interval || 20;
    (function poll() {
      if (cond()) return t.step(fn);
      waited += every;
      if (waited > limit) return t.step(function () { assert_unreached(d); });
      t.step_timeout(poll, every);
    })();
  };
  Test.prototype.add_cleanup = function (fn) { this.cleanups.push(fn); };
  Test.prototype.failWith = function (e) {
    if (this.phase === "done") return;
    if (e instanceof OptionalFeatureUnsupported) {
      this.status = PASS;
      this.message = "optional feature not supported: " + e.message;
    } else {
      this.status = FAIL;
      this.message = e && e.message !== undefined ? String(e.name && e.name !== "AssertionError" ? e.name + ": " + e.message : e.message) : format_value(e);
    }
    this.done();
  };
  Test.prototype.done = function () {
    if (this.phase === "done") return;
    if (this.status === NOTRUN) this.status = PASS;
    this.phase = "done";
    for (var i = 0; i < this.timers.length; i++) clearTimeout(this.timers[i]);
    for (var j = 0; j < this.cleanups.length; j++) {
      try { this.cleanups[j](); } catch (e) { harnessErrors.push("cleanup of " + this.name + " threw: " + e); }
    }
    if (this.resolve) this.resolve();
  };
  Test.prototype.whenDone = function () {
    var t = this;
    return new Promise(function (resolve) {
      if (t.phase === "done") resolve();
      else t.resolve = resolve;
    });
  };

  function nameOf(fn, name) { return name !== undefined ? name : fn && fn.name ? fn.name : "Untitled"; }

  function test(fn, name, props) {
    var t = new Test(nameOf(fn, name), props);
    t.step(fn, t, t);
    t.done();
    return t;
  }
  function async_test(fn, name, props) {
    if (typeof fn !== "function") { props = name; name = fn; fn = null; }
    var t = new Test(nameOf(fn, name), props);
    if (fn) t.step(fn, t, t);
    return t;
  }
  function promise_test(fn, name, props) {
    var t = new Test(nameOf(fn, name), props);
    t.phase = "queued";
    queue.push(function () {
      t.phase = "started";
      var p;
      try { p = fn.call(t, t); } catch (e) { t.failWith(e); return Promise.resolve(); }
      if (!p || typeof p.then !== "function") {
        t.failWith(new AssertionError("promise_test: test body must return a 'thenable' object (received " + format_value(p) + ")"));
        return Promise.resolve();
      }
      return Promise.resolve(p).then(function () { t.done(); }, function (e) { t.failWith(e); });
    });
    return t;
  }
  function generate_tests(fn, cases, props) {
    cases.forEach(function (c) { test(function () { fn.apply(this, c.slice(1)); }, c[0], props); });
  }

  // /common/sab.js
  function createBuffer(type, length, opts) {
    if (type === "ArrayBuffer") return new ArrayBuffer(length, opts);
    if (type === "SharedArrayBuffer") return new SharedArrayBuffer(length, opts);
    throw new Error("type has to be ArrayBuffer or SharedArrayBuffer");
  }

  function fetchFile(path) {
    path = String(path).replace(/^\.\//, "");
    return new Promise(function (resolve, reject) {
      var text;
      try { text = G.fs.readFileSync(path, "utf8"); } catch (e) { reject(new TypeError("resource not available: " + path)); return; }
      resolve({ ok: true, status: 200, text: function () { return Promise.resolve(text); }, json: function () { return Promise.resolve(JSON.parse(text)); } });
    });
  }

  function withTimeout(p, ms) {
    return new Promise(function (resolve) {
      var id = setTimeout(resolve, ms);
      p.then(function () { clearTimeout(id); resolve(); });
    });
  }

  function finish() {
    // Every promise_test in order (one may queue more), then every async test to its end or deadline.
    // A file may register tests from a promise callback after it has loaded (hmac.js does, once its
    // keys are imported), or say setup({explicit_done: true}) and call done() when it has: the queue is
    // drained until done() was called (when asked for) and a macrotask turn adds nothing to it.
    var settle = function () { return new Promise(function (resolve) { setTimeout(resolve, 0); }); };
    var run = function () {
      var next = queue.shift();
      if (next) return withTimeout(next(), DEFAULT_TIMEOUT).then(run);
      return (explicitDone ? withTimeout(doneCalled, DEFAULT_TIMEOUT) : Promise.resolve()).then(settle).then(function () {
        explicitDone = false;
        return queue.length ? run() : undefined;
      });
    };
    return run().then(function () {
      return withTimeout(Promise.all(tests.map(function (t) { return t.whenDone(); })), DEFAULT_TIMEOUT);
    }).then(function () {
      var passed = 0, failed = [];
      tests.forEach(function (t) {
        if (t.phase !== "done") { t.status = t.phase === "queued" ? NOTRUN : TIMEOUT; t.message = "did not complete"; }
        if (t.status === PASS) passed++;
        else failed.push([t.name, ["PASS", "FAIL", "TIMEOUT", "NOTRUN"][t.status], String(t.message).slice(0, 300)]);
      });
      return { total: tests.length, passed: passed, failed: failed, harness: harnessErrors };
    });
  }

  var api = {
    test: test, async_test: async_test, promise_test: promise_test, generate_tests: generate_tests,
    setup: function (a, b) {
      var props = typeof a === "function" ? b : a;
      if (typeof a === "function") a();
      if (props && props.explicit_done) explicitDone = true;
    },
    done: function () { markDone(); }, add_completion_callback: function () {}, add_result_callback: function () {},
    format_value: format_value, createBuffer: createBuffer, fetch_json: function (p) { return fetchFile(p).then(function (r) { return r.json(); }); },
    subsetTest: function (fn) { return fn.apply(null, Array.prototype.slice.call(arguments, 1)); },
    subsetTestByKey: function (key, fn) { return fn.apply(null, Array.prototype.slice.call(arguments, 2)); },
    shouldRunSubTest: function () { return true; },
    assert_true: assert_true, assert_false: assert_false, assert_equals: assert_equals, assert_not_equals: assert_not_equals,
    assert_in_array: assert_in_array, assert_array_equals: assert_array_equals, assert_array_approx_equals: assert_array_approx_equals,
    assert_approx_equals: assert_approx_equals, assert_less_than: assert_less_than, assert_greater_than: assert_greater_than,
    assert_less_than_equal: assert_less_than_equal, assert_greater_than_equal: assert_greater_than_equal,
    assert_between_inclusive: assert_between_inclusive, assert_regexp_match: assert_regexp_match,
    assert_class_string: assert_class_string, assert_own_property: assert_own_property, assert_not_own_property: assert_not_own_property,
    assert_inherits: assert_inherits, assert_idl_attribute: assert_idl_attribute, assert_readonly: assert_readonly,
    assert_unreached: assert_unreached, assert_implements: assert_implements, assert_implements_optional: assert_implements_optional,
    assert_throws_js: assert_throws_js, assert_throws_dom: assert_throws_dom, assert_throws_exactly: assert_throws_exactly,
    assert_throws: assert_throws, promise_rejects_js: promise_rejects_js, promise_rejects_dom: promise_rejects_dom,
    promise_rejects_exactly: promise_rejects_exactly,
  };
  for (var name in api) G[name] = api[name];
  if (typeof G.self === "undefined") G.self = G;
  if (typeof G.fetch === "undefined") G.fetch = fetchFile;
  G.GLOBAL = { isWindow: function () { return false; }, isWorker: function () { return false; }, isShadowRealm: function () { return false; } };
  G.__wpt = {
    load: function (source, file) {
      try { (0, eval)(source); } catch (e) { harnessErrors.push(file + " threw at load: " + (e && e.name) + ": " + (e && e.message)); }
    },
    finish: finish,
  };
})();
