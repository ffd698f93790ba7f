"""Helpers for the account and access-control suites: start a private roostd
with a given config, talk to it as anonymous, a user or the admin."""

import contextlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import tempfile
import urllib.error
import urllib.request

import pytest

from conftest import wait_until_healthy

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_BINARY = (HERE / ".." / ".." / ".build" / "debug" / "roostd").resolve()

ADMIN_TOKEN = "roost-test-admin-token-0123456789abcdef"

# Cheap hashing so that the suites stay fast.
FAST_HASHING = "password_cost: interactive\nhash_concurrency: 2\n"


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Response:
    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.raw = raw
        try:
            self.body = json.loads(raw) if raw else None
        except ValueError:
            self.body = None

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"<{self.status} {self.raw[:300]!r}>"


class Daemon:
    """A running roostd with a tiny HTTP client."""

    def __init__(self, base, data_dir, proc, log):
        self.base = base
        self.data_dir = pathlib.Path(data_dir)
        self.proc = proc
        self.log = log

    def call(self, method, path, body=None, token=None, headers=None, raw_body=None):
        hdrs = dict(headers or {})
        data = raw_body
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        if data is None and method in ("POST", "PUT", "PATCH"):
            data = b""
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                return Response(resp.status, dict(resp.headers), resp.read())
        except urllib.error.HTTPError as e:
            return Response(e.code, dict(e.headers), e.read())

    def sign_up(self, username, password="correct horse battery", **profile):
        r = self.call("POST", "/users", {"username": username, "password": password, **profile})
        assert r.status == 201, r
        return r.body

    def log_in(self, username, password):
        return self.call("POST", "/login", {"username": username, "password": password})

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")


@contextlib.contextmanager
def running_roostd(config_yaml, env=None):
    """Starts roostd with `config_yaml` in a fresh data directory; stops it on exit."""
    binary = pathlib.Path(os.environ.get("ROOSTD", str(DEFAULT_BINARY)))
    if not binary.exists():
        pytest.fail(f"roostd binary not found at {binary}; run `swift build` or set ROOSTD")
    with tempfile.TemporaryDirectory(prefix="roost-acl-") as tmp:
        config = pathlib.Path(tmp) / "roost.yaml"
        config.write_text(config_yaml)
        data_dir = pathlib.Path(tmp) / "data"
        port = _free_port()
        log = open(pathlib.Path(tmp) / "roostd.log", "w+b")
        proc_env = dict(os.environ)
        proc_env.pop("ROOST_ADMIN_TOKEN", None)
        proc_env.update(env or {})
        proc = subprocess.Popen(
            [str(binary), "serve", "--listen", f"127.0.0.1:{port}",
             "--data-dir", str(data_dir), "--config", str(config)],
            stdout=log, stderr=subprocess.STDOUT, env=proc_env)
        daemon = Daemon(f"http://127.0.0.1:{port}", data_dir, proc, log)
        try:
            wait_until_healthy(daemon.base, proc, daemon.log_text)
            yield daemon
        finally:
            daemon.stop()
            log.close()


def assert_error(resp, status, code=None):
    """The response is an error of `status` (and `code`) with the standard body."""
    assert resp.status == status, resp
    assert isinstance(resp.body, dict) and set(resp.body) == {"error", "description"}, resp
    if code is not None:
        assert resp.body["error"] == code, resp
