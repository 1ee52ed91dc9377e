// Every package in the lock imports and does its job on both Python tiers, with the version the lock
// pins. Needs the real library: `wasmcell setup` (.ci/run runs it first). Without it this fails, loudly.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { installedLibrary } from "../../src/library/library.ts";
import { loadLock } from "../../src/library/lock.ts";

/** One smoke test per distribution name in packages.lock.json: it must print "ok". */
export const SMOKE: Record<string, string> = {
  requests: `import requests
r = requests.Request("GET", "http://example.org/a", params={"q": "1 2"}).prepare()
assert r.url == "http://example.org/a?q=1+2", r.url`,
  urllib3: `from urllib3.util import parse_url
assert parse_url("http://a.example:8080/x?y").port == 8080`,
  idna: `import idna
assert idna.encode("bücher.example") == b"xn--bcher-kva.example"`,
  certifi: `import certifi
assert isinstance(certifi.where(), str)`,
  "charset-normalizer": `from charset_normalizer import from_bytes
best = from_bytes("Größe und Straße, naïve café".encode("utf-8")).best()
assert best is not None and best.encoding == "utf_8", best`,
  chardet: `import chardet
assert chardet.detect(b"plain ascii text")["encoding"] == "ascii"`,
  beautifulsoup4: `from bs4 import BeautifulSoup
s = BeautifulSoup("<div><p class='a'>x</p><p>y</p></div>", "html.parser")
assert [p.text for p in s.select("div > p.a")] == ["x"]`,
  soupsieve: `import soupsieve
assert soupsieve.compile("p.a").pattern == "p.a"`,
  html5lib: `import html5lib
doc = html5lib.parse("<p>unclosed", namespaceHTMLElements=False)
assert doc.find(".//p").text == "unclosed"`,
  webencodings: `import webencodings
assert webencodings.lookup("latin1").name == "windows-1252"`,
  PyYAML: `import yaml
assert yaml.safe_load("a: [1, 2]\\nb: {c: true}") == {"a": [1, 2], "b": {"c": True}}
assert yaml.safe_dump({"a": 1}) == "a: 1\\n"`,
  Jinja2: `from jinja2 import Environment
env = Environment(autoescape=True)
assert env.from_string("{% for i in xs %}{{ i }},{% endfor %}{{ h }}").render(xs=[1, 2], h="<b>") == "1,2,&lt;b&gt;"`,
  MarkupSafe: `from markupsafe import Markup, escape
assert str(escape("<a href='x'>")) == "&lt;a href=&#39;x&#39;&gt;"
assert Markup("<b>%s</b>") % "<i>" == "<b>&lt;i&gt;</b>"`,
  "python-dateutil": `from dateutil import parser, relativedelta
d = parser.parse("2024-01-31T10:00:00")
assert (d + relativedelta.relativedelta(months=1)).day == 29`,
  six: `import six
assert six.PY3 and six.text_type is str`,
  tabulate: `from tabulate import tabulate
t = tabulate([[1, "x"]], headers=["n", "s"], tablefmt="github")
assert t.splitlines()[0].startswith("|   n |"), t`,
  sympy: `import sympy
x = sympy.symbols("x")
assert sympy.factor(x**2 - 1) == (x - 1) * (x + 1)
assert sympy.integrate(2 * x, x) == x**2`,
  mpmath: `import mpmath
mpmath.mp.dps = 30
assert str(mpmath.pi).startswith("3.14159265358979323846")`,
  networkx: `import networkx as nx
g = nx.path_graph(5)
assert nx.shortest_path(g, 0, 4) == [0, 1, 2, 3, 4]`,
  openpyxl: `import io, openpyxl
wb = openpyxl.Workbook()
wb.active["A1"] = "hello"
wb.active["B2"] = 42
buf = io.BytesIO()
wb.save(buf)
back = openpyxl.load_workbook(io.BytesIO(buf.getvalue()))
assert back.active["A1"].value == "hello" and back.active["B2"].value == 42`,
  "et-xmlfile": `import io
from et_xmlfile import xmlfile
out = io.BytesIO()
with xmlfile(out) as xf:
    with xf.element("root"):
        xf.write("x")
assert out.getvalue() == b"<root>x</root>", out.getvalue()`,
  attrs: `import attr
@attr.s(auto_attribs=True, frozen=True)
class P:
    x: int
    y: int = 0
assert P(1) == P(1, 0)`,
  packaging: `from packaging.version import Version
from packaging.specifiers import SpecifierSet
assert Version("1.10") > Version("1.9") and "1.5" in SpecifierSet(">=1.0,<2")`,
  "more-itertools": `from more_itertools import chunked, windowed
assert list(chunked([1, 2, 3], 2)) == [[1, 2], [3]]
assert list(windowed([1, 2, 3], 2)) == [(1, 2), (2, 3)]`,
  tomli: `import tomli
assert tomli.loads("a = 1\\n[b]\\nc = 'x'") == {"a": 1, "b": {"c": "x"}}`,
  toml: `import toml
assert toml.loads("a = 1") == {"a": 1} and toml.dumps({"a": 1}) == "a = 1\\n"`,
  pyparsing: `import pyparsing as pp
expr = pp.Word(pp.alphas) + pp.Suppress("=") + pp.Word(pp.nums)
assert expr.parse_string("x = 42").as_list() == ["x", "42"]`,
  Markdown: `import markdown
assert markdown.markdown("# Hi\\n\\n*x*") == "<h1>Hi</h1>\\n<p><em>x</em></p>"`,
  Pygments: `from pygments import highlight
from pygments.lexers import PythonLexer
from pygments.formatters import HtmlFormatter
assert '<span class="n">x</span>' in highlight("x = 1", PythonLexer(), HtmlFormatter())`,
};

const lock = loadLock().lock;
// Debian's mpmath metadata says 0.0.0; its version is checked through mpmath.__version__ instead.
const VERSIONS = `import importlib.metadata as md, mpmath
want = ${JSON.stringify(Object.fromEntries(lock.packages.map((p) => [p.name, p.version])))}
got = {n: (mpmath.__version__ if n == "mpmath" else md.version(n)) for n in want}
bad = {n: (want[n], got[n]) for n in want if got[n] != want[n]}
print(bad or "ok")`;

for (const engine of ["pyodide", "native"] as const) {
  describe(`package library on ${engine}`, () => {
    let sandbox: Sandbox;
    before(async () => {
      assert.ok(installedLibrary(), "the package library is not installed: run `wasmcell setup` first (.ci/run does)");
      sandbox = await createSandbox({ python: { engine, pool: 1 }, limits: { timeoutMs: 60_000, memoryMb: 512 } });
    });
    after(() => sandbox?.close());

    test("every locked package has a smoke test", () => {
      assert.deepEqual(
        lock.packages.map((p) => p.name).filter((n) => !SMOKE[n]),
        [],
      );
    });

    test("the installed versions are the locked ones, from the library", async () => {
      const r = await sandbox.run({ language: "python", code: VERSIONS });
      assert.equal(r.stdout.trim(), "ok", JSON.stringify(r.ok ? r.stdout : r.error));
      const where = await sandbox.run({ language: "python", code: "import yaml, bs4\nprint(bs4.__file__)" });
      assert.match(
        where.stdout,
        engine === "pyodide" ? /^\/lib\/wasmcell-packages\/bs4\// : /^\/sandbox\/packages\/bs4\//,
      );
    });

    for (const p of lock.packages) {
      test(`${p.name} ${p.version}`, async () => {
        const r = await sandbox.run({ language: "python", code: `${SMOKE[p.name]}\nprint("ok")` });
        assert.equal(r.ok, true, JSON.stringify(r.ok ? r.stdout : r.error));
        assert.equal(r.stdout.trim(), "ok");
      });
    }
  });
}
