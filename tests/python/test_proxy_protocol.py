"""The PROXY protocol (v1 and v2) on a listener. The test plays HAProxy from
127.0.0.1, which the config trusts, and names the client in the header; a
real nginx (stream module, `proxy_protocol on;`) does the same in front.
Peers that are not trusted, and headers that are malformed or slow, are
closed unserved while the daemon keeps serving."""

import http.client
import json
import re
import shutil
import socket
import struct
import subprocess
import time
import pathlib

import pytest

from roost_harness import Roostd, free_port, remote_in_access_log

SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
# header_timeout bounds the PROXY header and the request head together (default 10 s).
CONFIG = 'password_cost: owasp\nhash_concurrency: 2\ntrusted_proxies: ["127.0.0.1"]\nheader_timeout: 5\n'


def v1(client, family="TCP4", destination="10.0.0.1"):
    return f"PROXY {family} {client} {destination} 51234 8080\r\n".encode()


def v2(client=None, command=0x21):
    if client is None:
        return SIGNATURE + bytes([command & 0xF0, 0x00]) + struct.pack("!H", 0)
    family = socket.AF_INET6 if ":" in client else socket.AF_INET
    body = socket.inet_pton(family, client) + socket.inet_pton(family, "::1" if family == socket.AF_INET6 else "10.0.0.1")
    body += struct.pack("!HH", 51234, 8080)
    return SIGNATURE + bytes([command, 0x21 if family == socket.AF_INET6 else 0x11]) + struct.pack("!H", len(body)) + body


def request(rid, method="GET", path="/healthz", body=None, close=True, headers=""):
    data = json.dumps(body).encode() if body is not None else b""
    return (f"{method} {path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: {rid}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{headers}" + ("Connection: close\r\n" if close else "") + "\r\n").encode() + data


def exchange(port, *pieces, source="127.0.0.1", timeout=10, pause=0.0):
    """Sends the pieces (pausing between them), returns (bytes read until close, seconds)."""
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.settimeout(timeout)
    started = time.monotonic()
    out = b""
    try:
        for piece in pieces:
            s.sendall(piece)
            time.sleep(pause)
        while chunk := s.recv(65536):
            out += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out, time.monotonic() - started


def status_of(reply):
    m = re.match(rb"HTTP/1.1 (\d+)", reply)
    return int(m.group(1)) if m else None


@pytest.fixture
def proxied(tmp_path):
    port = free_port()
    d = Roostd(tmp_path, config=CONFIG, args=("--listen", f"127.0.0.1:{port} proxy_protocol")).start()
    d.proxy_port = port
    yield d
    assert d.stop() == 0


# (name, bytes before the request, expected remote)
HEADER_CASES = [
    ("v1-tcp4", v1("203.0.113.7"), "203.0.113.7"),
    ("v1-tcp6", v1("2001:db8::9", "TCP6", "2001:db8::1"), "2001:db8::9"),
    ("v1-unknown", b"PROXY UNKNOWN\r\n", "127.0.0.1"),
    ("v2-tcp4", v2("198.51.100.4"), "198.51.100.4"),
    ("v2-tcp6", v2("2001:db8::17"), "2001:db8::17"),
    ("v2-local", v2(None, 0x20), "127.0.0.1"),
]


def test_header_names_the_client(proxied):
    for name, header, expected in HEADER_CASES:
        reply, _ = exchange(proxied.proxy_port, header + request(name, headers="X-Forwarded-For: 6.6.6.6\r\n"))
        assert status_of(reply) == 200, (name, reply[:200])
        # The named client is not a trusted proxy, so its X-Forwarded-For is not read.
        assert remote_in_access_log(proxied, name) == expected, name


def test_header_in_pieces_and_keep_alive(proxied):
    header = v2("192.0.2.33")
    reply, _ = exchange(proxied.proxy_port, header[:5], header[5:20], header[20:] + request("split-1", close=False),
                        request("split-2"), pause=0.2)
    assert reply.count(b"HTTP/1.1 200") == 2, reply[:300]
    assert remote_in_access_log(proxied, "split-1") == remote_in_access_log(proxied, "split-2") == "192.0.2.33"


# (name, bytes sent): each closes the connection with no response.
REFUSED = [
    ("plain HTTP", request("no-header")),
    ("garbage", b"GARBAGE\r\n\r\n" + request("garbage")),
    ("bad v1", b"PROXY TCP4 203.0.113.7 10.0.0.1 99999 1\r\n" + request("bad-v1")),
    ("long v1", b"PROXY TCP4 " + b"1" * 200 + b"\r\n" + request("long-v1")),
    ("bad v2 version", SIGNATURE + b"\x11\x11\x00\x0c" + b"\x00" * 12 + request("bad-v2")),
    ("huge v2", SIGNATURE + b"\x21\x11\xff\xff" + b"\x00" * 5000),
]


def test_malformed_headers_are_closed_unserved(proxied):
    for name, data in REFUSED:
        reply, seconds = exchange(proxied.proxy_port, data)
        assert reply == b"" and seconds < 3, (name, reply[:200], seconds)
    assert "request_id=no-header" not in proxied.log_text() and "request_id=garbage" not in proxied.log_text()
    reply, _ = exchange(proxied.proxy_port, v1("203.0.113.8") + request("after"))
    assert status_of(reply) == 200


def test_untrusted_peer_is_refused_even_with_a_good_header(proxied):
    reply, seconds = exchange(proxied.proxy_port, v1("203.0.113.9") + request("spoofed"), source="127.0.0.2")
    assert reply == b"" and seconds < 3, reply
    assert "request_id=spoofed" not in proxied.log_text()
    assert re.search(r"PROXY protocol connection from an untrusted peer closed.*127\.0\.0\.2", proxied.log_text())


def test_slow_header_is_closed(proxied):
    reply, seconds = exchange(proxied.proxy_port, b"PROXY TCP4 203.0.113", timeout=20)
    assert reply == b"" and 4 <= seconds < 9, (reply, seconds)
    reply, _ = exchange(proxied.proxy_port, v1("203.0.113.10") + request("after-slow"))
    assert status_of(reply) == 200


def test_throttle_counts_the_named_client(proxied):
    port = proxied.proxy_port
    assert status_of(exchange(port, v1("198.51.100.20") + request(
        "signup", "POST", "/users", {"username": "realuser", "password": "the real password"}))[0]) == 201
    # Wrong log-ins from one client behind the proxy block that client (50, and
    # what the bucket refills meanwhile)...
    statuses = [status_of(exchange(port, v1("203.0.113.66") + request(
        f"ghost-{i}", "POST", "/login", {"username": f"ghost{i}", "password": "x"}))[0]) for i in range(56)]
    assert statuses[:50] == [401] * 50 and statuses[-1] == 429, statuses
    # ...and nobody else: the real user, from another client, gets in.
    assert status_of(exchange(port, v1("198.51.100.77") + request(
        "real", "POST", "/login", {"username": "realuser", "password": "the real password"}))[0]) == 200


@pytest.mark.parametrize("listen,config,message", [
    ("proxy_protocol", "", "needs trusted_proxies"),
    ("proxy_protocol", 'trusted_proxies: ["127.0.0.1"]\ntls: {certificate: /nonexistent, key: /nonexistent}\n', None),
])
def test_proxy_listener_config_errors(tmp_path, listen, config, message):
    port = free_port()
    d = Roostd(tmp_path, config=config, args=("--listen", f"127.0.0.1:{port} {listen}")).start(wait=False)
    assert d.proc.wait(timeout=20) != 0
    if message:
        assert message in d.log_text(), d.log_text()
    d.kill9()


def test_https_listener_cannot_take_proxy_protocol(tmp_path):
    port = free_port()
    (tmp_path / "c.cnf").write_text("")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "k.pem", "-out", "c.pem", "-days", "1", "-subj", "/CN=localhost"],
                   cwd=tmp_path, check=True, capture_output=True)
    config = f'trusted_proxies: ["127.0.0.1"]\ntls:\n  certificate: {tmp_path}/c.pem\n  key: {tmp_path}/k.pem\n'
    d = Roostd(tmp_path, config=config, args=("--listen", f"https://127.0.0.1:{port} proxy_protocol")).start(wait=False)
    assert d.proc.wait(timeout=20) != 0
    assert "proxy_protocol is for plain listen addresses" in d.log_text(), d.log_text()
    d.kill9()


STREAM_MODULE = pathlib.Path("/usr/lib/nginx/modules/ngx_stream_module.so")


@pytest.mark.skipif(shutil.which("nginx") is None or not STREAM_MODULE.exists(),
                    reason="nginx with the stream module is not installed (make deps installs libnginx-mod-stream)")
def test_nginx_stream_sends_proxy_protocol(proxied, tmp_path):
    """nginx's stream module in front with `proxy_protocol on;` (as at a TCP
    load balancer); clients connect from 127.0.1.x, nginx from 127.0.0.1."""
    front = free_port()
    (tmp_path / "nginx.conf").write_text(f"""
        load_module {STREAM_MODULE};
        daemon off;
        master_process off;
        pid {tmp_path}/nginx.pid;
        error_log {tmp_path}/nginx-error.log;
        events {{ worker_connections 256; }}
        stream {{
            server {{
                listen 127.0.0.1:{front};
                proxy_pass 127.0.0.1:{proxied.proxy_port};
                proxy_protocol on;
            }}
        }}
    """)
    nginx = subprocess.Popen(["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", front), timeout=1).close()
                break
            except OSError:
                assert nginx.poll() is None and time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.05)
        for i in range(1, 4):
            conn = http.client.HTTPConnection("127.0.0.1", front, timeout=10, source_address=(f"127.0.1.{i}", 0))
            conn.request("GET", "/healthz", headers={"X-Request-Id": f"nginx-stream-{i}", "X-Forwarded-For": "6.6.6.6"})
            assert conn.getresponse().status == 200
            conn.close()
            assert remote_in_access_log(proxied, f"nginx-stream-{i}") == f"127.0.1.{i}"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
