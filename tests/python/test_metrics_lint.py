"""/metrics passes Prometheus's own linter, `promtool check metrics`, once every kind of
request has been made (so the request counters and histograms, SQLite timers, live
stream metrics and the rest all have samples), and every metric family has its HELP."""

import http.client
import re
import shutil
import subprocess
import urllib.parse

import pytest

from roost_harness import running_roostd
from roost_harness import png

CONFIG = "default_permission: public\nfiles_permission: public\n"


def open_live_stream(base, path):
    """Opens an SSE stream, reads its first bytes (the stream is open) and closes it."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", path, headers={"Accept": "text/event-stream"})
    resp = conn.getresponse()
    status, first = resp.status, resp.read1(64) if resp.status == 200 else resp.read()
    conn.close()
    return status, first


@pytest.fixture(scope="module")
def exposition():
    if shutil.which("promtool") is None:
        pytest.fail("promtool not found: `make deps` installs Debian's prometheus package, which ships it")
    with running_roostd(CONFIG) as d:
        steps = [
            ("create", lambda: d.call("POST", "/things", {"n": 1}), 201),
            ("list", lambda: d.call("GET", "/things"), 200),
            ("upload", lambda: d.call("POST", "/files", raw_body=png(32, 24, 1), headers={"Content-Type": "image/png"}), 201),
            ("sign-up", lambda: d.call("POST", "/users", {"username": "lint", "password": "correct horse battery"}), 201),
            ("log-in", lambda: d.log_in("lint", "correct horse battery"), 200),
            ("not found", lambda: d.call("GET", "/things/nope"), 404),
        ]
        for name, step, status in steps:
            r = step()
            assert r.status == status, (name, r)
        live_status, live_first = open_live_stream(d.base, "/things/_live")
        assert live_status == 200 and live_first, live_first
        r = d.call("GET", "/metrics")
        assert r.status == 200, r
        yield r.raw.decode()


def test_promtool_check_metrics_is_clean(exposition):
    proc = subprocess.run(["promtool", "check", "metrics"], input=exposition.encode(), capture_output=True, timeout=60)
    findings = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 0, findings
    assert findings.strip() == "", findings


def test_every_family_has_help_text(exposition):
    typed = set(re.findall(r"^# TYPE (\S+) ", exposition, re.M))
    helped = set(re.findall(r"^# HELP (\S+) \S", exposition, re.M))
    assert len(typed) >= 15, sorted(typed)
    assert typed - helped == set()


@pytest.mark.parametrize("method,route,status", [
    ("POST", "/:collection", "201"),
    ("GET", "/:collection", "200"),
    ("GET", "/:collection/:id", "404"),
    ("POST", "/files", "201"),
    ("POST", "/login", "200"),
])
def test_requests_made_are_counted(exposition, method, route, status):
    line = f'roost_http_requests_total{{method="{method}",route="{route}",status="{status}"}} 1'
    labels = re.findall(r"^roost_http_requests_total\{([^}]*)\} (\d+)", exposition, re.M)
    wanted = {f'method="{method}"', f'route="{route}"', f'status="{status}"'}
    assert any(set(l.split(",")) == wanted and int(n) >= 1 for l, n in labels), (line, labels)
