"""The HTTP helpers every test and drill uses: one `Response`, one request
on a fresh connection (`call`, `request`) and a keep-alive `Client`.
Everything talks to 127.0.0.1 only."""

import http.client
import json
import time
import urllib.parse

_UNPARSED = object()


class Response:
    """An answer: `status`, `headers` (lower-case names; `sent_headers` as the
    server spelled them), `raw` bytes, `body` (the JSON value, None when empty
    or not JSON) and `elapsed` seconds."""

    def __init__(self, status, headers, raw, elapsed=None):
        self.status = status
        self.sent_headers = dict(headers)
        self.headers = {k.lower(): v for k, v in self.sent_headers.items()}
        self.raw = raw
        self.elapsed = elapsed
        self._body = _UNPARSED

    @property
    def body(self):
        if self._body is _UNPARSED:
            try:
                self._body = json.loads(self.raw) if self.raw else None
            except ValueError:
                self._body = None
        return self._body

    @body.setter
    def body(self, value):
        self._body = value

    def json(self):
        """The JSON value of the body (raises on a body that is not JSON)."""
        return json.loads(self.raw) if self.raw else None

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"<{self.status} {self.raw[:300]!r}>"


def encode(method, body=None, token=None, headers=None, raw_body=None):
    """(data, headers) for a request: `body` as JSON, or `raw_body` as is; an
    empty body for POST, PUT and PATCH without one; `token` as Bearer."""
    hdrs = dict(headers or {})
    data = raw_body
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    if data is None and method in ("POST", "PUT", "PATCH"):
        data = b""
    return data, hdrs


def exchange(conn, method, path, data, headers):
    """Sends one request on `conn` and reads the whole answer into a Response."""
    started = time.monotonic()
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    raw = r.read()
    return Response(r.status, r.getheaders(), raw, time.monotonic() - started)


def call(port, method, path, body=None, token=None, headers=None, raw_body=None, timeout=15):
    """One request on a fresh connection: a Response."""
    data, hdrs = encode(method, body, token, headers, raw_body)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        return exchange(conn, method, path, data, hdrs)
    finally:
        conn.close()


def request(port, method, path, body=None, headers=None, raw_body=None, timeout=30):
    """One request on a fresh connection: (status, headers as sent, raw bytes).
    `body` bytes or str go out as they are, anything else as JSON; both with
    Content-Type application/json unless `headers` say otherwise. `raw_body`
    goes out as it is, with no Content-Type."""
    hdrs = dict(headers or {})
    data = raw_body
    if body is not None:
        data = body if isinstance(body, (bytes, str)) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        resp = exchange(conn, method, path, data, hdrs)
        return resp.status, resp.sent_headers, resp.raw
    finally:
        conn.close()


def send_json(conn, method, path, body=None, headers=None):
    """One request on an open `conn` (e.g. from a chosen source address through
    a proxy), `body` as JSON; closes it. Returns (status, headers as sent, raw bytes)."""
    try:
        resp = exchange(conn, method, path, json.dumps(body) if body is not None else None,
                        {"Content-Type": "application/json", **(headers or {})})
        return resp.status, resp.sent_headers, resp.raw
    finally:
        conn.close()


class Client:
    """A keep-alive HTTP/1.1 client for one thread. Network errors propagate
    (a drill counts them as 'no answer'), except that with `retry_get` a GET
    on a connection the server closed while idle is sent once more."""

    def __init__(self, port, timeout=10.0, token=None, retry_get=False):
        self.port, self.timeout, self.token, self.retry_get = port, timeout, token, retry_get
        self.conn = None

    def call(self, method, path, body=None, headers=None, token=None, raw_body=None):
        """`body` is sent as JSON, `raw_body` as it is; `token` (else the client's) as Bearer."""
        if token is None and self.token and "Authorization" not in (headers or {}):
            token = self.token
        data, hdrs = encode(method, body, token, headers, raw_body)
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                resp = exchange(self.conn, method, path, data, hdrs)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt or method != "GET" or not self.retry_get:
                    raise
                continue
            except Exception:
                self.close()
                raise
            if resp.header("connection") and resp.header("connection").lower() == "close":
                self.close()
            return resp

    def request(self, method, path, body=None, headers=None):
        """A dict or list `body` goes out as JSON, anything else as it is."""
        if isinstance(body, (dict, list)):
            return self.call(method, path, body, headers)
        return self.call(method, path, None, headers, raw_body=body)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def one_request(port, method, path, body=None, headers=None, timeout=10.0):
    """`Client.request` on a connection of its own."""
    client = Client(port, timeout)
    try:
        return client.request(method, path, body, headers)
    finally:
        client.close()


def assert_error(resp, status, code=None):
    """The response is an error of `status` (and `code`) with the standard body.
    `resp` is a Response, or anything with `status` and `json()` (a refused live stream)."""
    body = resp.body if isinstance(resp, Response) else resp.json()
    assert resp.status == status, (resp.status, body)
    assert isinstance(body, dict) and set(body) == {"error", "description"}, (resp.status, body)
    if code is not None:
        assert body["error"] == code, (resp.status, body)


def json_query(value, safe="/"):
    """A JSON value as a compact, URL-encoded query parameter (`query`, `sort`, …)."""
    return urllib.parse.quote(json.dumps(value, separators=(",", ":")), safe=safe)
