"""A real Caddy (the Debian package, 2.6) in front of roostd, configured from
the example etc/caddy/Caddyfile, as plain HTTP and terminating TLS with a test
CA's certificate. roostd trusts only 127.0.0.1, where Caddy connects from; the
test's clients connect to Caddy from other loopback addresses (127.0.x.y), so
each is a distinct client. Caddy runs with its admin API off, automatic HTTPS
off, bound to 127.0.0.1, and HOME and XDG dirs in the test's temp dir."""

import http.client
import http.server
import json
import pathlib
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest

from roost_harness import Roostd, clean_env, free_port, remote_in_access_log, send_json

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "etc" / "caddy" / "Caddyfile"
ROOST_CONFIG = 'password_cost: owasp\ntrusted_proxies: ["127.0.0.1"]\nforwarded_header: X-Forwarded-For\n'
SPOOFS = [  # what a client may send to pick its address; none may work
    {"X-Forwarded-For": "6.6.6.6"},
    {"X-Forwarded-For": "127.0.0.1, 6.6.6.6"},
    {"Forwarded": "for=6.6.6.6"},
    {"X-Forwarded-For": "6.6.6.6", "Forwarded": "for=7.7.7.7", "X-Real-IP": "8.8.8.8"},
]

pytestmark = pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy is not installed (make deps installs it)")


def site_config(scheme, upstream_port, port, cert=None, key=None):
    """etc/caddy/Caddyfile with a test address and upstream; each change must apply."""
    text = EXAMPLE.read_text()
    site = f"http://127.0.0.1:{port} {{\n\tbind 127.0.0.1"
    if scheme == "https":
        site = f"https://localhost:{port} {{\n\tbind 127.0.0.1\n\ttls {cert} {key}"
    for old, new in [("example.org {", site), ("reverse_proxy 127.0.0.1:8080 {", f"reverse_proxy 127.0.0.1:{upstream_port} {{")]:
        assert old in text, f"etc/caddy/Caddyfile no longer has {old!r}"
        text = text.replace(old, new)
    return "{\n\tadmin off\n\tauto_https off\n}\n" + text


class Caddy:
    """`caddy run` on loopback with the example's site, its state in `tmp`."""

    def __init__(self, tmp, scheme, upstream_port, pki=None):  # noqa: F811
        self.tmp, self.scheme, self.port = tmp, scheme, free_port()
        cert, key = (pki / "first.pem", pki / "first.key") if pki else (None, None)
        (tmp / "Caddyfile").write_text(site_config(scheme, upstream_port, self.port, cert, key))
        env = clean_env(HOME=tmp / "home", XDG_DATA_HOME=tmp / "data-home", XDG_CONFIG_HOME=tmp / "config-home")
        self.log = open(tmp / "caddy.log", "wb")
        self.proc = subprocess.Popen(["caddy", "run", "--adapter", "caddyfile", "--config", str(tmp / "Caddyfile")],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.context = ssl.create_default_context(cafile=str(pki / "ca.pem")) if pki else None
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert self.proc.poll() is None and time.monotonic() < deadline, (tmp / "caddy.log").read_text()
                time.sleep(0.05)

    def call(self, client, method, path, body=None, headers=None):
        """One request from source address `client`: (status, headers, body)."""
        if self.scheme == "https":
            conn = http.client.HTTPSConnection("localhost", self.port, context=self.context, timeout=15,
                                               source_address=(client, 0))
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15, source_address=(client, 0))
        return send_json(conn, method, path, body, headers)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


@pytest.fixture(params=["http", "https"])
def stack(request, tmp_path, pki):  # noqa: F811
    roost = Roostd(tmp_path, config=ROOST_CONFIG).start()
    caddy = Caddy(tmp_path, request.param, roost.port, pki if request.param == "https" else None)
    try:
        yield roost, caddy
    finally:
        caddy.stop()
        assert roost.stop() == 0
        # Caddy kept its state in the test's dirs, not the user's HOME.
        assert (tmp_path / "config-home" / "caddy" / "autosave.json").exists()


def test_caddy_names_the_client_whatever_it_claims(stack):
    roost, caddy = stack
    for i, spoof in enumerate(SPOOFS):
        rid = f"caddy-spoof-{caddy.scheme}-{i}"
        status, headers, _ = caddy.call(f"127.0.4.{i + 1}", "GET", "/healthz", headers={**spoof, "X-Request-Id": rid})
        assert status == 200
        assert remote_in_access_log(roost, rid) == f"127.0.4.{i + 1}", spoof
        assert headers.get("Strict-Transport-Security") == "max-age=31536000"


@pytest.mark.parametrize("stack", ["http"], indirect=True)  # TLS at Caddy changes nothing here
def test_caddy_in_front_no_one_is_locked_out(stack):
    roost, caddy = stack
    status, _, body = caddy.call("127.0.2.1", "POST", "/users", {"username": "realuser", "password": "the real password"})
    assert status == 201, body

    def ghost(i):  # a wrong log-in for a made-up username, claiming an address of its own
        for _ in range(3):  # 503 Overloaded (a slow machine's hash pool) is no verdict: wait as told
            status, headers, _ = caddy.call("127.0.1.1", "POST", "/login", {"username": f"ghost{i}", "password": "wrong"},
                                            headers={"X-Forwarded-For": f"10.9.{i}.1"})
            if status != 503:
                return status
            time.sleep(min(5, int(headers.get("Retry-After", "1"))))
        return status

    # 50 of them from one client (one at a time: parallel ones may meet 503
    # from the hash pool) are all answered, and count against its real address...
    assert [ghost(i) for i in range(50)] == [401] * 50
    # ...which is then blocked (2 s, doubling per failure: the first block may
    # lapse while a slow machine hashes, so allow a few more tries).
    statuses = []
    while 429 not in statuses and len(statuses) < 6:
        statuses.append(ghost(50 + len(statuses)))
    assert statuses[-1] == 429, statuses
    # The real user, from an address the account has never used, gets in.
    status, _, body = caddy.call("127.0.3.1", "POST", "/login", {"username": "realuser", "password": "the real password"})
    assert status == 200, body


class _Echo(http.server.BaseHTTPRequestHandler):
    """An upstream that answers with the request's headers as JSON pairs."""

    def do_GET(self):
        body = json.dumps(list(self.headers.items())).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("spoof", SPOOFS)
def test_what_caddy_sends_upstream(tmp_path, spoof):
    """The example's promise, seen by the upstream: the right-most
    X-Forwarded-For entry is the client's own address, and no Forwarded
    header arrives (Caddy 2.6 replaces a client's X-Forwarded-For outright)."""
    echo = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    caddy = Caddy(tmp_path, "http", echo.server_address[1])
    try:
        status, _, body = caddy.call("127.0.5.9", "GET", "/", headers=spoof)
    finally:
        caddy.stop()
        echo.shutdown()
    assert status == 200
    seen = {}
    for name, value in json.loads(body):
        seen.setdefault(name.lower(), []).append(value)
    assert "forwarded" not in seen, seen
    xff = [a.strip() for v in seen.get("x-forwarded-for", []) for a in v.split(",")]
    assert xff and xff[-1] == "127.0.5.9", seen
