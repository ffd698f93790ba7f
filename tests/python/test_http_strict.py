"""Strict HTTP/1.1 request heads, origin-form paths, escaped logs and
connection bounds (issue 33, "HTTP parsing, paths and logs").

Every connection passes a gate before evhttp: a malformed or ambiguous head
is answered with a JSON 400 and the connection closed, on plain HTTP, HTTPS
and PROXY protocol listeners alike, and the daemon keeps serving. Raw
sockets send each variant; nothing here goes through an HTTP library that
would normalise it first."""

import json
import re
import socket
import ssl
import time

import pytest

from roost_harness import Roostd, free_port, remote_in_access_log

# (name, raw request head and body) -- each must be refused with 400 and a close.
MALFORMED = [
    ("two different Content-Length", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 12\r\n\r\n{}"),
    ("repeated equal Content-Length", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
    ("Content-Length list", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}"),
    ("Content-Length plus sign", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}"),
    ("Content-Length negative", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    ("Content-Length trailing junk", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length:  2x\r\n\r\n{}"),
    ("Content-Length hex", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: 0x2\r\n\r\n{}"),
    ("Content-Length empty", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n"),
    ("space before colon", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"),
    ("tab before colon", b"GET /healthz HTTP/1.1\r\nHost\t: x\r\n\r\n"),
    ("bare LF request line", b"GET /healthz HTTP/1.1\nHost: x\r\n\r\n"),
    ("bare LF headers", b"GET /healthz HTTP/1.1\r\nHost: x\nAccept: */*\n\n"),
    ("bare CR", b"GET /healthz HTTP/1.1\r\nHost: x\rAccept: */*\r\n\r\n"),
    ("obs-fold space", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n"),
    ("obs-fold tab", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: one\r\n\ttwo\r\n\r\n"),
    ("NUL in value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n"),
    ("escape char in value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: a\x1b[31mb\r\n\r\n"),
    ("DEL in value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n"),
    ("TE and CL", b"POST /strict HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("CL and TE", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"),
    ("TE gzip, chunked", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
    ("TE identity", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n"),
    ("TE chunked twice", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("TE with junk", b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"),
    ("space in path", b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("HTTP/2.0 line", b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
    ("no version", b"GET /healthz\r\nHost: x\r\n\r\n"),
    ("empty header name", b"GET /healthz HTTP/1.1\r\n: x\r\n\r\n"),
    ("no colon", b"GET /healthz HTTP/1.1\r\nHost x\r\n\r\n"),
    ("leading empty line", b"\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
]

# Request targets that are not origin-form paths: none may reach a route.
NOT_PATHS = [
    "//anything/metrics", "//x/_/", "//x/admin/collections", "//metrics", "//", "///metrics",
    "http://localhost/metrics", "http://x/healthz", "https://x/admin/collections", "*", "localhost:80", "metrics",
]

ADMIN_TOKEN = "strict-admin-token-0123456789abcdef"
CONFIG = """\
default_permission: public
admin_token: strict-admin-token-0123456789abcdef
password_cost: owasp
hash_concurrency: 2
trusted_proxies: ["127.0.0.1"]
max_connections_per_address: 2
header_timeout: 3
tls:
  certificate: {cert}
  key: {key}
"""


class Fronts:
    """One daemon with a plain, an HTTPS and a PROXY protocol listener."""

    def __init__(self, tmp, pki):
        self.plain, self.tls, self.proxy = free_port(), free_port(), free_port()
        self.pki = pki
        config = CONFIG.format(cert=pki / "first.pem", key=pki / "first.key")
        self.daemon = Roostd(tmp, config=config, port=self.plain,
                             args=("--listen", f"https://127.0.0.1:{self.tls}",
                                   "--listen", f"127.0.0.1:{self.proxy} proxy_protocol")).start()

    def connect(self, front, timeout=10):
        s = socket.create_connection(("127.0.0.1", getattr(self, front)), timeout=timeout)
        if front == "tls":
            ctx = ssl.create_default_context(cafile=str(self.pki / "ca.pem"))
            s = ctx.wrap_socket(s, server_hostname="localhost")
        if front == "proxy":
            s.sendall(b"PROXY TCP4 203.0.113.9 10.0.0.1 51234 8080\r\n")
        return s

    def exchange(self, front, payload, timeout=10):
        """Sends `payload`, returns (every byte until the server closed, whether it closed)."""
        s = self.connect(front, timeout)
        out, closed = b"", False
        try:
            s.sendall(payload)
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                out += chunk
        except socket.timeout:
            pass
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            closed = True
        finally:
            s.close()
        return out, closed


@pytest.fixture(scope="module")
def fronts(tmp_path_factory, pki):
    f = Fronts(tmp_path_factory.mktemp("strict"), pki)
    yield f
    assert f.daemon.stop() == 0


def responses(raw):
    """The (status, headers, body) of each response in `raw`, in order."""
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (l.decode().partition(":") for l in lines[1:])}
        length = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:length]))
        raw = rest[length:]
    return out


def still_serves(fronts, front):
    out, _ = fronts.exchange(front, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert responses(out)[0][0] == 200, out


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_malformed_heads_are_refused_and_closed(fronts, front):
    for name, payload in MALFORMED:
        # Without "Connection: close" a served request would leave the connection open (a timeout here).
        out, closed = fronts.exchange(front, payload, timeout=5)
        assert closed, (front, name, out)
        replies = responses(out)
        assert len(replies) == 1, (front, name, out)
        status, headers, body = replies[0]
        assert status == 400, (front, name, out)
        assert headers.get("connection") == "close", (front, name, headers)
        assert json.loads(body)["error"] == "BadRequest", (front, name, body)
        still_serves(fronts, front)


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_a_malformed_head_after_a_good_one_on_the_same_connection(fronts, front):
    """A pipelined second request is checked as strictly as a first one."""
    good = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    for name, payload in MALFORMED[:12]:
        out, closed = fronts.exchange(front, good + payload, timeout=5)
        replies = responses(out)
        assert [r[0] for r in replies] == [200, 400], (front, name, out)
        assert closed, (front, name)


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_a_head_over_64_kib_gets_431_and_a_close(fronts, front):
    # Exactly 64 KiB and no end yet: the server has read every byte sent when it
    # refuses, so its close cannot turn into a reset that loses the answer.
    limit = 64 * 1024
    one_field = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "
    many = b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(8000))
    for head in [one_field + b"a" * (limit - len(one_field)), many[:limit]]:
        assert len(head) == limit
        out, closed = fronts.exchange(front, head)
        replies = responses(out)
        assert [r[0] for r in replies] == [431] and closed, (front, out[:300])
        assert json.loads(replies[0][2])["error"] == "RequestHeaderFieldsTooLarge"
    still_serves(fronts, front)


def test_strict_heads_that_are_fine_still_pass(fronts):
    cases = [
        b"GET /healthz HTTP/1.0\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Tab:\tv\t\r\nX-Utf8: \xc3\xa9\r\nConnection: close\r\n\r\n",
        b"POST /strict HTTP/1.1\r\nHost: x\r\ncontent-length: 9\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"a\": 1}\n",
        b"POST /strict HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nContent-Type: application/json\r\n\r\n"
        b"8\r\n{\"a\": 2}\r\n0\r\n\r\n",
        b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ]
    for payload in cases:
        out, closed = fronts.exchange("plain", payload)
        status = int(out.split(b" ")[1])
        assert status in (200, 201), (payload, out)
        assert closed, payload


def test_keep_alive_pipelining_with_bodies_still_works(fronts):
    body = b'{"n": 1}'
    one = b"POST /pipelined HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    last = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    for front in ["plain", "tls", "proxy"]:
        out, closed = fronts.exchange(front, one * 3 + last)
        assert [r[0] for r in responses(out)] == [201, 201, 201, 200], (front, out)
        assert closed


def test_a_large_body_then_a_pipelined_request(fronts):
    """The gate counts a large body (read in many pieces) to find the next head."""
    for front in ["plain", "tls", "proxy"]:
        body = json.dumps({"blob": "x" * 300_000}).encode()
        big = (b"POST /bigbodies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % len(body) + body)
        bad = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"
        last = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        out, closed = fronts.exchange(front, big + last)
        assert [r[0] for r in responses(out)] == [201, 200], (front, out[:300])
        out, closed = fronts.exchange(front, big + bad + last)
        assert [r[0] for r in responses(out)] == [201, 400], (front, out[:300])
        assert closed


SMUGGLED_ID = "smuggled{n}"


def smuggled(n):
    body = b'{"x": 1}'
    return (b"PUT /smuggled/" + SMUGGLED_ID.format(n=n).encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def smuggling_cases():
    inner = [smuggled(n) for n in range(6)]
    return [
        # The first Content-Length covers "{}", the second the whole rest: a lenient parser runs the PUT.
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        b"Content-Length: %d\r\n\r\n{}" % (2 + len(inner[0])) + inner[0],
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
        b"Content-Length: 2\r\n\r\n{}" % (2 + len(inner[1])) + inner[1],
        # CL.TE and TE.CL: one side sees the end of the body where the other sees a second request.
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + inner[2],
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding : chunked\r\n"
        b"Content-Length: 2\r\n\r\n{}" + inner[3],
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: +2\r\n\r\n{}" + inner[4],
        b"POST /carrier HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        b" chunked\r\nContent-Length: 2\r\n\r\n{}" + inner[5],
    ]


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_a_request_smuggled_in_a_body_is_never_run(fronts, front):
    for n, payload in enumerate(smuggling_cases()):
        out, closed = fronts.exchange(front, payload, timeout=5)
        assert [r[0] for r in responses(out)] == [400], (front, n, out)
        assert closed
    time.sleep(0.3)
    for n in range(6):
        status, _, body = fronts.daemon.request("GET", "/smuggled/" + SMUGGLED_ID.format(n=n))
        assert status == 404, (front, n, body)
    status, _, body = fronts.daemon.request("GET", "/carrier")
    assert status in (200, 404)
    if status == 200:
        assert json.loads(body) == [], body
    # The same PUT sent on its own does create its document: the check above could fail.
    out, _ = fronts.exchange(front, smuggled(99).replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n"))
    assert responses(out)[0][0] in (200, 201), out
    assert fronts.daemon.request("GET", "/smuggled/" + SMUGGLED_ID.format(n=99))[0] == 200


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_a_head_or_trace_body_holding_a_request_is_never_run(fronts, front):
    """libevent never reads a HEAD or TRACE body: the reply closes the connection instead."""
    for n, method in [(50, b"HEAD"), (51, b"TRACE")]:
        inner = smuggled(n)
        payload = method + b" /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(inner) + inner
        out, closed = fronts.exchange(front, payload, timeout=5)
        head = out.split(b"\r\n\r\n")[0].lower()
        assert head.startswith(b"http/1.1 200" if method == b"HEAD" else b"http/1.1 405"), (front, out)
        assert b"connection: close" in head and closed, (front, out)
        assert out.count(b"HTTP/1.1") == 1, (front, out)
        time.sleep(0.2)
        assert fronts.daemon.request("GET", "/smuggled/" + SMUGGLED_ID.format(n=n))[0] == 404


@pytest.mark.parametrize("front", ["plain", "tls", "proxy"])
def test_only_origin_form_paths_reach_routes(fronts, front):
    for target in NOT_PATHS:
        for method in ["GET", "OPTIONS", "DELETE"]:
            out, closed = fronts.exchange(front, f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode(), timeout=5)
            replies = responses(out)
            assert [r[0] for r in replies] == [400], (front, method, target, out)
            assert b"# TYPE" not in out and b"collections" not in out, (front, target)
            assert closed
    # The same routes by their real paths answer (metrics and the console are not 400s).
    out, _ = fronts.exchange(front, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert responses(out)[0][0] != 400


def test_log_lines_cannot_be_forged(fronts):
    d = fronts.daemon
    rid = "forge-1"
    forged_line = b"2026-01-01T00:00:00.000Z info roostd: GET /admin 200 0.1ms request_id=forged remote=6.6.6.6"
    cases = [
        # Raw quote, backslash and a non-UTF-8 byte in the path: written escaped.
        (b"GET /logforge/a\"b\\c\xff HTTP/1.1\r\nHost: x\r\nX-Request-Id: " + rid.encode() + b"\r\nConnection: close\r\n\r\n", 404),
        # Encoded CR LF and spaces stay encoded: one token.
        (b"GET /logforge/x%0D%0A" + forged_line.replace(b" ", b"%20") + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         b"X-Request-Id: forge-2\r\n\r\n", 404),
        # A user agent carrying a line of its own, and a raw CR LF in the path: refused before anything is logged of them.
        (b"GET /logforge/y HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r" + forged_line + b"\r\n\r\n", 400),
        (b"GET /logforge/z\r\n" + forged_line + b" HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET /logforge/w HTTP/1.1\r\nHost: x\r\nUser-Agent: \x1b[2K\x1b[1G" + forged_line + b"\r\n\r\n", 400),
    ]
    for payload, status in cases:
        out, _ = fronts.exchange("plain", payload, timeout=5)
        assert responses(out)[0][0] == status, (payload, out)
    deadline = time.monotonic() + 3
    while "forge-2" not in d.log_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = d.log_text()
    # The forged fields appear only inside the one (encoded) path token, never as fields of their own.
    assert not re.search(r"(^| )request_id=forged", text, re.M)
    assert not re.search(r"(^| )remote=6\.6\.6\.6", text, re.M)
    assert "\x1b" not in text
    for line in text.splitlines():
        assert not line.startswith("2026-01-01"), line
    assert re.search(r'info roostd: GET /logforge/a\\x22b\\x5Cc\\xEF\\xBF\\xBD 404 [\d.]+ms request_id=forge-1 remote=127\.0\.0\.1$',
                     text, re.M), text[-2000:]
    line = next(l for l in text.splitlines() if "request_id=forge-2" in l)
    assert line.count(" request_id=") == 1 and line.count(" remote=") == 1, line
    # The console's in-memory log (LogRing) shows the same escaped path.
    status, _, body = d.request("GET", "/admin/logs?request_id=forge-1", headers={"Authorization": "Bearer " + ADMIN_TOKEN})
    assert status == 200, body
    messages = [e["message"] for e in json.loads(body)["entries"]]
    assert any(m.startswith('GET /logforge/a\\x22b\\x5Cc\\xEF\\xBF\\xBD 404') for m in messages), messages


@pytest.mark.parametrize("front", ["tls", "proxy"])
def test_a_trickled_head_is_cut_off_on_tls_and_proxy_listeners(fronts, front):
    """header_timeout (3 s here) counts from the head's first byte, whatever carries it."""
    s = fronts.connect(front)
    started = time.monotonic()
    closed = False
    try:
        for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40 + b"\r\n\r\n":
            s.sendall(bytes([byte]))
            time.sleep(0.2)
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        closed = True
    try:
        closed = closed or s.recv(100) == b""
    except (ConnectionResetError, ssl.SSLError):
        closed = True
    elapsed = time.monotonic() - started
    s.close()
    assert closed and 2.5 < elapsed < 6, (front, elapsed)
    still_serves(fronts, front)


def test_trusted_proxies_are_exempt_from_the_per_address_limit(fronts):
    """127.0.0.1 is a trusted proxy here, so max_connections_per_address: 2 does not apply to it."""
    socks = [fronts.connect("plain") for _ in range(6)]
    try:
        for s in socks:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for s in socks:
            assert s.recv(100).startswith(b"HTTP/1.1 200"), "a trusted proxy's connection was refused"
    finally:
        for s in socks:
            s.close()


# ---- Bounds on one address: head time and open connections ----

LIMITS = "default_permission: public\nheader_timeout: 2\nmax_connections_per_address: 4\n"


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    d = Roostd(tmp_path_factory.mktemp("limits"), config=LIMITS).start()
    yield d
    assert d.stop() == 0


def open_socket(d, timeout=10):
    host, port = d.base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


@pytest.mark.parametrize("head", [
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40 + b"\r\n\r\n",
    b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n" + b"X-Pad: b\r\n" * 6 + b"\r\n{}",
])
def test_a_trickled_head_is_cut_off_at_header_timeout(limited, head):
    s = open_socket(limited)
    started = time.monotonic()
    sent = 0
    try:
        for byte in head:
            s.sendall(bytes([byte]))
            sent += 1
            time.sleep(0.25)  # far below the 60 s idle timeout: only the head limit can end this
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        rest = s.recv(100)
    except (ConnectionResetError, socket.timeout):
        rest = b""
    elapsed = time.monotonic() - started
    s.close()
    assert rest == b"", rest
    assert sent < len(head)
    assert 1.5 < elapsed < 4.5, elapsed
    assert limited.request("GET", "/healthz")[0] == 200


def test_a_slow_but_timely_head_and_idle_keep_alive_are_fine(limited):
    s = open_socket(limited)
    try:
        for piece in [b"GET /healthz HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"]:
            s.sendall(piece)
            time.sleep(0.5)
        assert s.recv(1000).startswith(b"HTTP/1.1 200")
        time.sleep(3)  # idle between requests is not head time
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(1000).startswith(b"HTTP/1.1 200")
    finally:
        s.close()


def test_connections_per_address_are_limited(limited):
    socks = [open_socket(limited, timeout=5) for _ in range(7)]
    time.sleep(0.3)
    served = refused = 0
    try:
        for s in socks:
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                reply = s.recv(100)
            except (ConnectionResetError, BrokenPipeError):
                reply = b""
            if reply.startswith(b"HTTP/1.1 200"):
                served += 1
            else:
                assert reply == b"", reply
                refused += 1
    finally:
        for s in socks:
            s.close()
    assert (served, refused) == (4, 3)
    # Closed connections free their places.
    time.sleep(0.3)
    socks = [open_socket(limited) for _ in range(4)]
    try:
        for s in socks:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        for s in socks:
            s.close()


def wait_accepted(d, timeout=10):
    """Waits until roostd has accepted every connection made to its port: the
    listening sockets' accept queues (rx_queue in /proc/net/tcp) are empty. A
    loop starved of CPU for a moment would otherwise accept a later connection
    before an earlier one waiting on another loop's listener."""
    port = int(d.base.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    while True:
        waiting = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                lines = open(table).read().splitlines()[1:]
            except FileNotFoundError:
                continue
            for line in lines:
                f = line.split()
                if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # LISTEN on our port
                    waiting += int(f[4].split(":")[1], 16)
        if waiting == 0:
            return
        assert time.monotonic() < deadline, f"{waiting} connections still not accepted"
        time.sleep(0.02)


def held_open(sockets):
    """True when roostd has closed none of `sockets` (nothing to read, no end of stream)."""
    for s in sockets:
        s.settimeout(0.05)
        try:
            if s.recv(10) == b"":
                return False
        except socket.timeout:
            pass
        finally:
            s.settimeout(10)
    return True


def test_idle_connections_count_too(limited):
    """Connections that never send a byte hold their places until they close."""
    # The previous test closed its connections a moment ago: roostd may take these before it has seen
    # those close (another loop's, or later in the same turn) and refuse one (2 runs in 6, alone; `ss`
    # showed it closed by roostd). First four idle ones that roostd kept open.
    for _ in range(50):
        idle = [open_socket(limited) for _ in range(4)]
        wait_accepted(limited)
        if held_open(idle):
            break
        for s in idle:
            s.close()
        time.sleep(0.1)
    else:
        pytest.fail("roostd kept refusing one of four connections")
    try:
        extra = open_socket(limited, timeout=5)
        try:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = extra.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            reply = b""
        extra.close()
        assert reply == b""
    finally:
        for s in idle:
            s.close()
    time.sleep(0.3)
    assert limited.request("GET", "/healthz")[0] == 200
