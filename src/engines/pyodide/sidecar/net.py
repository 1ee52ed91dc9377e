# HTTP for guest Python, through the host. Run by the sidecar right after setup.py, in the same
# globals. http.client's connections (and so urllib.request, which builds on them) never open a
# socket: a request is handed to _wasmcell_net_call, a synchronous call into the host's gated fetch
# (net.ts, through the device of bridge.ts), and the reply — plain bytes, never a JS object — is parsed by http.client's own
# HTTPResponse. Redirects are not followed by the host here (urllib's handler follows them, each hop
# a new, checked request). Direct sockets fail at once (here, in harden.py's audit hook and in
# guards.ts): the sidecar has no network of its own, and Emscripten's socket emulation would only
# fail slowly or crash the interpreter.
import json, os
import http.client as _hc, urllib.request as _ur, io as _io, base64 as _b64, socket as _socket, errno as _errno

# The host's gated fetch is a device (bridge.ts): the request's JSON written, the reply's JSON read
# back; a failure of the bridge itself is an OSError with an errno. No JavaScript object is involved.
def _wasmcell_host_fetch(request, *, _os=os, _device="/dev/wasmcell-net", _chunk=1 << 20):
    try:
        fd = _os.open(_device, _os.O_RDWR)
    except FileNotFoundError:
        raise OSError(_errno.ENETUNREACH, "network: the sandbox has no network") from None
    try:
        data = memoryview(request.encode("utf-8"))
        while data:
            data = data[_os.write(fd, data):]
        parts = []
        while part := _os.read(fd, _chunk):
            parts.append(part)
    finally:
        _os.close(fd)
    return b"".join(parts).decode("utf-8")

_WASMCELL_NO_SOCKET = "direct sockets are not available in the sandbox; use urllib.request, http.client or pyodide.http.pyfetch, which go through the host's allowlist"
_WASMCELL_NO_LOOKUP = "name lookups are not available in the sandbox; use urllib.request, http.client or pyodide.http.pyfetch, whose requests the host resolves and checks against its allowlist"
# The clean answer for the usual entry points; harden.py's audit hook and guards.ts hold below them.
def _wasmcell_no_socket(*args, **kwargs):
    raise OSError(_errno.ENETUNREACH, _WASMCELL_NO_SOCKET)
_socket.socket.connect = _wasmcell_no_socket
_socket.socket.connect_ex = _wasmcell_no_socket
_socket.create_connection = _wasmcell_no_socket

class _WasmcellReply:
    def __init__(self, raw):
        self._raw = raw
    def makefile(self, *args, **kwargs):
        return _io.BytesIO(self._raw)
    def close(self):
        pass

def _wasmcell_net_call(method, url, headers, body):
    if body is not None and not isinstance(body, (bytes, bytearray)):
        body = body.encode("utf-8") if isinstance(body, str) else b"".join(body)
    request = json.dumps({"url": url, "method": method, "headers": [[str(k), str(v)] for k, v in headers],
                          "body": _b64.b64encode(body).decode("ascii") if body else None})
    reply = json.loads(_wasmcell_host_fetch(request))
    if not reply.get("ok"):
        message = str(reply.get("error", "network: the request failed"))
        if reply.get("denied"):
            raise PermissionError(_errno.EACCES, message)
        if reply.get("timeout"):
            raise TimeoutError(_errno.ETIMEDOUT, message)
        raise OSError(_errno.ECONNREFUSED, message)
    return reply

# pyodide.http.pyfetch and open_url (pyfetch.py, installed as wasmcell_pyfetch) send through the same call.
import wasmcell_pyfetch as _pf
_pf._send = _wasmcell_net_call
del _pf

class _WasmcellHTTPConnection(_hc.HTTPConnection):
    """An http.client connection whose requests go through the host's gated fetch."""
    _wasmcell_scheme = "http"
    def connect(self):
        pass
    def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
        self._wasmcell = [method, url, [], b""]
    def putheader(self, header, *values):
        header = header.decode("latin-1") if isinstance(header, bytes) else str(header)
        value = ", ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values)
        self._wasmcell[2].append((header, value))
    def endheaders(self, message_body=None, *, encode_chunked=False):
        if message_body is not None:
            self.send(message_body)
    def send(self, data):
        if hasattr(data, "read"):
            data = data.read()
        if isinstance(data, str):
            data = data.encode("iso-8859-1")
        if not isinstance(data, (bytes, bytearray)):
            data = b"".join(data)
        self._wasmcell[3] += bytes(data)
    def request(self, method, url, body=None, headers={}, *, encode_chunked=False):
        # urllib turns an OSError from request() (not from getresponse()) into URLError: call here.
        super().request(method, url, body, headers, encode_chunked=encode_chunked)
        self._wasmcell_response = self._wasmcell_fetch()
    def getresponse(self):
        response = getattr(self, "_wasmcell_response", None)
        self._wasmcell_response = None
        return response or self._wasmcell_fetch()
    def _wasmcell_fetch(self):
        method, target, headers, body = self._wasmcell
        if not target.startswith("/"):
            url = target
        else:
            host = self.host if ":" not in self.host else "[%s]" % self.host
            url = "%s://%s:%d%s" % (self._wasmcell_scheme, host, self.port, target)
        reply = _wasmcell_net_call(method, url, headers, body or None)
        content = _b64.b64decode(reply["body"])
        lines = ["HTTP/1.1 %d %s" % (reply["status"], reply["statusText"] or "-")]
        for name, value in reply["headers"]:
            if name not in ("content-length", "transfer-encoding", "connection"):
                lines.append("%s: %s" % (name, value))
        lines.append("content-length: %d" % len(content))
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + content
        response = _hc.HTTPResponse(_WasmcellReply(raw), method=method, url=url)
        response.begin()
        return response
    def close(self):
        pass

class _WasmcellHTTPSConnection(_WasmcellHTTPConnection):
    default_port = 443
    _wasmcell_scheme = "https"
    def __init__(self, host, port=None, *args, context=None, **kwargs):
        super().__init__(host, port, *args, **kwargs)

_hc.HTTPConnection = _WasmcellHTTPConnection
_hc.HTTPSConnection = _WasmcellHTTPSConnection
_ur.HTTPHandler.http_open = lambda self, req: self.do_open(_WasmcellHTTPConnection, req)
class _WasmcellHTTPSHandler(_ur.AbstractHTTPHandler):
    def https_open(self, req):
        return self.do_open(_WasmcellHTTPSConnection, req)
    https_request = _ur.AbstractHTTPHandler.do_request_
_ur.HTTPSHandler = _WasmcellHTTPSHandler
_ur.install_opener(_ur.build_opener(_WasmcellHTTPSHandler))
del _WasmcellHTTPSHandler

# `requests` (from the package library, when it is installed): urllib3 opens its own sockets, which
# fail at once here, so its transport adapter sends through the same call instead. Each redirect hop
# requests follows is a new adapter send, so a new, checked request. A refusal is requests' own
# ConnectionError (Timeout for the time caps) naming the host and why.
def _wasmcell_patch_requests():
    try:
        import requests.adapters as _ra, requests.exceptions as _rx, urllib3.response as _u3r, urllib3._collections as _u3c
    except ImportError:
        return
    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        try:
            reply = _wasmcell_net_call(request.method, request.url, list(request.headers.items()), body or None)
        except TimeoutError as e:
            raise _rx.Timeout(e.strerror, request=request) from None
        except OSError as e:
            raise _rx.ConnectionError(e.strerror or str(e), request=request) from None
        content = _b64.b64decode(reply["body"])
        headers = _u3c.HTTPHeaderDict()
        for name, value in reply["headers"]:
            if name not in ("content-length", "transfer-encoding", "connection"):
                headers.add(name, value)
        headers["content-length"] = str(len(content))
        raw = _u3r.HTTPResponse(body=_io.BytesIO(content), headers=headers, status=reply["status"],
                                reason=reply["statusText"] or None, preload_content=False, decode_content=True,
                                request_method=request.method, request_url=request.url)
        return self.build_response(request, raw)
    _ra.HTTPAdapter.send = send
_wasmcell_patch_requests()
del _wasmcell_patch_requests
