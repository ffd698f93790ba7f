"""Shared fixtures: start a real roostd on a free loopback port for the session."""

import json
import os
import pathlib
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_BINARY = (HERE / ".." / ".." / ".build" / "debug" / "roostd").resolve()

# Collections the daemon is configured with. The "indexed" twin of the random
# test collection has value indexes on every path the random filters use most,
# so the same filters run through both the JSON-scan and the index code paths.
CONFIG_YAML = """\
default_permission: public
collections:
  docsIndexed:
    indexes: [a, b.c, b.d, arr, objs.x, objs.y, name, n, flag]
  locations:
    indexes: [name, categories, "location:geo"]
"""


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(base, proc, log_text, seconds=20):
    """Waits for roostd at `base` to answer /healthz; fails the test with its
    log if it exits or stays silent."""
    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            pytest.fail(f"roostd exited with {proc.returncode}:\n{log_text()}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"roostd did not answer /healthz within {seconds} s")
        time.sleep(0.05)


class Roost:
    """A running roostd and a tiny stdlib HTTP client for it."""

    def __init__(self, base):
        self.base = base

    def request(self, method, path, body=None, headers=None, raw_body=None):
        data = raw_body
        hdrs = dict(headers or {})
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def json(self, method, path, body=None, headers=None):
        status, hdrs, raw = self.request(method, path, body, headers)
        return status, hdrs, (json.loads(raw) if raw else None)


@pytest.fixture(scope="session")
def roostd():
    binary = pathlib.Path(os.environ.get("ROOSTD", str(DEFAULT_BINARY)))
    if not binary.exists():
        pytest.fail(f"roostd binary not found at {binary}; run `swift build` or set ROOSTD")
    with tempfile.TemporaryDirectory(prefix="roost-pytest-") as tmp:
        config = pathlib.Path(tmp) / "roost.yaml"
        config.write_text(CONFIG_YAML)
        port = _free_port()
        log = open(pathlib.Path(tmp) / "roostd.log", "w+b")
        proc = subprocess.Popen(
            [str(binary), "serve", "--listen", f"127.0.0.1:{port}",
             "--data-dir", str(pathlib.Path(tmp) / "data"), "--config", str(config)],
            stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        def log_text():
            log.seek(0)
            return log.read().decode(errors="replace")

        try:
            wait_until_healthy(base, proc, log_text)
            roost = Roost(base)
            roost.pid = proc.pid  # for tests that watch the daemon's memory
            yield roost
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            log.close()
