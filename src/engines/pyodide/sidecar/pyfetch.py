# `pyodide.http` as guest Python sees it in the sandbox: `pyfetch` and `open_url` over the same
# synchronous bridge to the host's gated fetch that urllib and http.client use (net.py), so the host
# decides every request, redirect hops included. Nothing here holds or returns a JavaScript object:
# a response is status, header pairs and bytes, copied out of the host's reply. Pyodide's own
# `pyodide.http` (and `pyodide`, `js`, `pyodide_js`) stay blocked; harden.py makes this module the one
# answer to `from pyodide.http import ...`. Without network every request fails at once, naming why.
#
# Differences from Pyodide's pyfetch: the request is a URL string (there is no JavaScript Request);
# `signal` and `fetcher` are refused; `buffer()` (a JavaScript ArrayBuffer) is not available — use
# `bytes()` or `memoryview()`; the body is read in full before pyfetch returns (the host caps it).

import base64 as _b64
import io as _io
import json as _json
import os as _os
import shutil as _shutil
import tempfile as _tempfile
import urllib.parse as _parse

__all__ = ["open_url", "pyfetch", "FetchResponse", "HttpStatusError", "BodyUsedError", "AbortError"]

# Set by net.py: _send(method, url, header_pairs, body) -> the host's reply (a dict), or an OSError.
_send = None

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_REDIRECTS = 20
# Dropped when a redirect leaves the origin, as fetch does.
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


class HttpStatusError(OSError):
    """Raised by FetchResponse.raise_for_status for a 4xx or 5xx status."""

    def __init__(self, status, status_text, url):
        self.status = status
        self.status_text = status_text
        self.url = url
        if 400 <= status < 500:
            super().__init__(f"{status} Client Error: {status_text} for url: {url}")
        elif 500 <= status < 600:
            super().__init__(f"{status} Server Error: {status_text} for url: {url}")
        else:
            super().__init__(f"{status} Invalid error code not between 400 and 599: {status_text} for url: {url}")

    def __reduce__(self):
        return (self.__class__, (self.status, self.status_text, self.url), self.__dict__)


class BodyUsedError(OSError):
    def __init__(self, *args):
        super().__init__(*(args or ("Response body is already used",)))


class AbortError(OSError):
    pass


class FetchResponse:
    """A fetched response: status, headers and the whole body, as plain Python values."""

    def __init__(self, url, status, status_text, headers, body, redirected=False):
        self._url = url
        self._status = status
        self._status_text = status_text
        self._headers = headers
        self._body = body
        self._redirected = redirected
        self._used = False

    @property
    def body_used(self):
        return self._used

    @property
    def headers(self):
        merged = {}
        for name, value in self._headers:
            name = name.lower()
            merged[name] = f"{merged[name]}, {value}" if name in merged else value
        return merged

    @property
    def ok(self):
        return 200 <= self._status < 300

    @property
    def redirected(self):
        return self._redirected

    @property
    def status(self):
        return self._status

    @property
    def status_text(self):
        return self._status_text

    @property
    def type(self):
        return "basic"

    @property
    def url(self):
        return self._url

    def raise_for_status(self):
        if 400 <= self._status < 600:
            raise HttpStatusError(self._status, self._status_text, self._url)

    def clone(self):
        if self._used:
            raise BodyUsedError
        return FetchResponse(self._url, self._status, self._status_text, list(self._headers), self._body, self._redirected)

    def abort(self, reason=None):
        raise ValueError("abort_controller is not set")

    def _take(self):
        if self._used:
            raise BodyUsedError
        self._used = True
        return self._body

    async def bytes(self):
        return self._take()

    async def memoryview(self):
        return memoryview(self._take())

    async def text(self):
        return self._take().decode("utf-8", "replace")

    async def string(self):
        return await self.text()

    async def json(self, **kwargs):
        return _json.loads(await self.text(), **kwargs)

    async def buffer(self):
        raise NotImplementedError("buffer() returns a JavaScript ArrayBuffer, which the sandbox does not expose; use bytes()")

    async def unpack_archive(self, *, extract_dir=None, format=None):
        data = self._take()
        name = self._url.rsplit("/", 1)[-1] or "archive"
        with _tempfile.TemporaryDirectory() as tmp:
            path = _os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            _shutil.unpack_archive(path, extract_dir, format)

    def __repr__(self):
        return f"<FetchResponse {self._status} {self._url}>"


def _header_pairs(headers):
    if headers is None:
        return []
    items = headers.items() if hasattr(headers, "items") else headers
    return [(str(k), str(v)) for k, v in items]


def _encode_body(body):
    if body is None or isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytearray, memoryview)):
        return bytes(body)
    raise TypeError("pyfetch: body must be str, bytes, bytearray or memoryview in the sandbox")


def _origin(url):
    p = _parse.urlsplit(url)
    return (p.scheme, p.hostname, p.port)


def _fetch(url, method="GET", headers=None, body=None, redirect="follow"):
    """One logical fetch: each redirect hop is a new request the host checks on its own."""
    if not isinstance(url, str):
        raise TypeError("pyfetch in the sandbox takes a URL string (there is no JavaScript Request)")
    if redirect not in ("follow", "manual", "error"):
        raise TypeError(f"pyfetch: redirect must be 'follow', 'manual' or 'error', not {redirect!r}")
    if _send is None:
        raise OSError("pyodide.http: the sandbox has no network bridge")
    method = str(method).upper()
    pairs = _header_pairs(headers)
    data = _encode_body(body)
    redirected = False
    for _ in range(_MAX_REDIRECTS + 1):
        reply = _send(method, url, pairs, data)
        status = int(reply["status"])
        location = next((v for k, v in reply["headers"] if k.lower() == "location"), None)
        if status in _REDIRECTS and location is not None and redirect != "manual":
            if redirect == "error":
                raise OSError(f"pyfetch: {url} redirects to {location} (redirect='error')")
            target = _parse.urljoin(url, location)
            if status == 303 and method not in ("GET", "HEAD") or status in (301, 302) and method == "POST":
                method = "GET"
                data = None
                pairs = [(k, v) for k, v in pairs if k.lower() not in ("content-type", "content-length")]
            if _origin(target) != _origin(url):
                pairs = [(k, v) for k, v in pairs if k.lower() not in _CREDENTIAL_HEADERS]
            url = target
            redirected = True
            continue
        content = _b64.b64decode(reply["body"])
        return FetchResponse(url, status, str(reply.get("statusText") or ""), list(reply["headers"]), content, redirected)
    raise OSError(f"pyfetch: more than {_MAX_REDIRECTS} redirects")


async def pyfetch(request, /, *, signal=None, fetcher=None, **kwargs):
    """Fetches `request` (a URL) through the host's allowlist; returns a FetchResponse."""
    if signal is not None or fetcher is not None:
        raise TypeError("pyfetch: signal and fetcher are not available in the sandbox")
    known = {k: kwargs.pop(k) for k in ("method", "headers", "body", "redirect") if k in kwargs}
    # The remaining fetch options (mode, credentials, cache, referrer, integrity, keepalive...) have no
    # meaning for a request the host makes without cookies or a browser context: ignored, as fetch
    # ignores what it does not know.
    return _fetch(request, **known)


def open_url(url):
    """Fetches `url` synchronously (GET, redirects followed) and returns its text as a StringIO."""
    response = _fetch(url)
    return _io.StringIO(response._take().decode("utf-8", "replace"))
