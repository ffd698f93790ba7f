"""A real nginx (the Debian package) in front of roostd, configured from the
example etc/nginx/roost.conf: it terminates TLS and appends the client to
X-Forwarded-For. roostd trusts only 127.0.0.1, where nginx connects from;
the test's clients connect to nginx from other loopback addresses
(127.0.1.x), so each is a distinct client nginx does not trust either."""

import http.client
import pathlib
import shutil
import subprocess
import time

import pytest

from roost_harness import Roostd, free_port, remote_in_access_log, send_json

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "etc" / "nginx" / "roost.conf"

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None and not pathlib.Path("/usr/sbin/nginx").exists(),
                                reason="nginx is not installed (make deps installs it)")


def site_config(roost_port, http_port, https_port, cert, key, access_log):
    """etc/nginx/roost.conf with test ports, certificates and log path; each change must apply."""
    text = EXAMPLE.read_text()
    for old, new in [
        ("/var/log/nginx/roost.access.log", str(access_log)),
        ("server 127.0.0.1:8080;", f"server 127.0.0.1:{roost_port};"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;"),
        ("listen [::]:443 ssl http2;", ""),
        ("/etc/letsencrypt/live/example.org/fullchain.pem", str(cert)),
        ("/etc/letsencrypt/live/example.org/privkey.pem", str(key)),
        ("server_name example.org;", "server_name localhost;"),
    ]:
        assert old in text, f"etc/nginx/roost.conf no longer has {old!r}"
        text = text.replace(old, new)
    return text


@pytest.fixture
def stack(tmp_path, pki):  # noqa: F811
    roost = Roostd(tmp_path, config='password_cost: owasp\ntrusted_proxies: ["127.0.0.1"]\n').start()
    http_port, https_port = free_port(), free_port()
    (tmp_path / "site.conf").write_text(site_config(roost.port, http_port, https_port, pki / "first.pem", pki / "first.key",
                                                       tmp_path / "roost.access.log"))
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / d).mkdir()
    (tmp_path / "nginx.conf").write_text(f"""
        daemon off;
        master_process off;
        pid {tmp_path}/nginx.pid;
        error_log {tmp_path}/nginx-error.log;
        events {{ worker_connections 256; }}
        http {{
            access_log off;
            client_body_temp_path {tmp_path}/body;
            proxy_temp_path {tmp_path}/proxy;
            fastcgi_temp_path {tmp_path}/fastcgi;
            uwsgi_temp_path {tmp_path}/uwsgi;
            scgi_temp_path {tmp_path}/scgi;
            include {tmp_path}/site.conf;
        }}
    """)
    nginx = subprocess.Popen(["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:
        try:
            http.client.HTTPConnection("127.0.0.1", http_port, timeout=1).request("GET", "/")
            break
        except OSError:
            assert nginx.poll() is None and time.monotonic() < deadline, nginx.stderr.read() if nginx.poll() is not None else "nginx did not start"
            time.sleep(0.05)
    try:
        yield roost, https_port, pki, tmp_path / "roost.access.log"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        assert roost.stop() == 0


def call(https_port, pki, client, method, path, body=None, headers=None):  # noqa: F811
    import ssl
    ctx = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    conn = http.client.HTTPSConnection("localhost", https_port, context=ctx, timeout=15, source_address=(client, 0))
    return send_json(conn, method, path, body, headers)


def test_nginx_in_front_names_the_client_and_no_one_is_locked_out(stack):
    roost, port, pki, _ = stack  # noqa: F811
    status, headers, _ = call(port, pki, "127.0.2.1", "POST", "/users", {"username": "realuser", "password": "the real password"})
    assert status == 201 and headers.get("Strict-Transport-Security"), headers
    # 50 wrong log-ins for made-up usernames from 50 clients, each also claiming
    # an address of its choice: the access log shows the real one.
    for i in range(50):
        rid = f"nginx-ghost-{i}"
        status, _, _ = call(port, pki, f"127.0.1.{i + 1}", "POST", "/login", {"username": f"ghost{i}", "password": "wrong"},
                            headers={"X-Forwarded-For": "6.6.6.6", "X-Request-Id": rid})
        assert status == 401
        assert remote_in_access_log(roost, rid) == f"127.0.1.{i + 1}"
    # One of them keeps going until its own address is blocked...
    statuses = [call(port, pki, "127.0.1.1", "POST", "/login", {"username": f"more{i}", "password": "x"})[0] for i in range(50)]
    assert statuses[-1] == 429 and statuses.count(401) == 49, statuses
    # ...and the real user, from an address the account has never used, gets in.
    status, _, body = call(port, pki, "127.0.3.1", "POST", "/login", {"username": "realuser", "password": "the real password"})
    assert status == 200, body


def test_the_example_keeps_sessions_out_of_its_log_and_metrics_inside(stack):
    roost, port, pki, access_log = stack  # noqa: F811
    secret = "s3cr3t-session-token-in-a-query"
    for path in [f"/things?access_token={secret}", f"/things/_live?access_token={secret}&x=1", f"/files/x?a=1&access_token={secret}"]:
        status, _, _ = call(port, pki, "127.0.1.9", "GET", path)
        assert status in (200, 401, 404, 400), (path, status)
    for path in ["/metrics", "/metrics/", "/metrics?x=1"]:
        status, _, body = call(port, pki, "127.0.1.9", "GET", path)
        assert status == 404 and b"# TYPE" not in body, path
    log = access_log.read_text()
    assert "/things" in log and "/metrics" in log, log
    assert secret not in log and "access_token" not in log, log
