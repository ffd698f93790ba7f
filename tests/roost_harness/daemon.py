"""`Roostd`: one roostd process at a time on a work directory whose data
survives restarts, with its log, readiness wait and HTTP helpers."""

import contextlib
import json
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from . import client as http
from . import engine
from .paths import binary, clean_env, free_port

# Sets the variables named in argv[2] to this process's pid, moves the fd in
# argv[1] to fd 3 (SD_LISTEN_FDS_START), then execs roostd: exec keeps the
# pid, so the variables name the daemon, as systemd's would.
_EXEC_WRAPPER = """
import os, sys
fd = int(sys.argv[1])
if fd >= 0 and fd != 3:
    os.dup2(fd, 3)
    os.close(fd)
if fd >= 0:
    os.set_inheritable(3, True)
for name in filter(None, sys.argv[2].split(",")):
    os.environ[name] = str(os.getpid())
os.execv(sys.argv[3], sys.argv[3:])
"""


class RoostdError(AssertionError):
    """roostd did not start, did not answer /healthz, or did not stop."""


class Roostd:
    """roostd serving `workdir`/data (or `data_dir`) with `workdir`/roost.yaml.

    `config` is written to roost.yaml (None keeps the file there). `env` adds
    to a clean environment. `args` go after the standard flags. Each start
    takes a new free port unless `port` is given. `pid_vars` ("WATCHDOG_PID",
    "LISTEN_PID") are set to the daemon's own pid; `listen_socket` is passed
    as fd 3 with LISTEN_FDS=1 (socket activation), and then no --listen."""

    def __init__(self, workdir, config="default_permission: public\n", env=None, args=(), port=None,
                 data_dir=None, pid_vars=(), listen_socket=None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.workdir / "roost.yaml"
        if config is not None or not self.config_path.exists():
            self.config_path.write_text(config or "")
        self.data_dir = pathlib.Path(data_dir) if data_dir else self.workdir / "data"
        self.env, self.args, self.pid_vars, self.listen_socket = env or {}, tuple(args), tuple(pid_vars), listen_socket
        self.fixed_port = port if port is not None else (listen_socket.getsockname()[1] if listen_socket else None)
        self.port = self.fixed_port
        self.proc = None
        self.logs = []  # one file per start, oldest first
        self.usernames = {}  # _id → username of the users `new_user` signed up
        self.starts = 0

    # ------------------------------------------------------------------ process
    def start(self, wait=True, timeout=30):
        """Starts roostd; with `wait`, returns once /healthz answers 200."""
        if not binary().exists():
            raise RoostdError(f"roostd binary not found at {binary()}; run `swift build` or set ROOSTD")
        self.port = self.fixed_port or free_port()
        argv = [str(binary()), "serve", "--config", str(self.config_path), "--data-dir", str(self.data_dir)]
        if self.listen_socket is None:
            argv += ["--listen", f"127.0.0.1:{self.port}"]
        argv += list(self.args)
        env = clean_env(**self.env)
        url = engine.database_url(self.data_dir)
        if url and "ROOST_DATABASE_URL" not in env and "database_url" not in self.config_path.read_text():
            env["ROOST_DATABASE_URL"] = url
        pid_vars, pass_fds = self.pid_vars, ()
        if self.listen_socket is not None:
            env["LISTEN_FDS"] = "1"
            pid_vars += ("LISTEN_PID",)
            pass_fds = (self.listen_socket.fileno(),)
        if pid_vars:
            fd = self.listen_socket.fileno() if self.listen_socket is not None else -1
            argv = [sys.executable, "-c", _EXEC_WRAPPER, str(fd), ",".join(pid_vars)] + argv
        log_path = self.workdir / f"roostd-{time.monotonic_ns()}.log"
        self.logs.append(log_path)
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, pass_fds=pass_fds)
        self.starts += 1
        return self.wait_ready(timeout) if wait else self

    def wait_ready(self, timeout=30):
        """Waits for /healthz to answer 200; raises RoostdError (with the log) if
        roostd exits first or stays silent for `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RoostdError(f"roostd exited with {self.proc.returncode} at start:\n{self.log_tail()}")
            if self.healthy(timeout=1):
                return self
            time.sleep(0.05)
        self.kill9()
        raise RoostdError(f"roostd did not answer /healthz within {timeout} s:\n{self.log_tail()}")

    def healthy(self, timeout=2.0):
        try:
            return http.call(self.port, "GET", "/healthz", timeout=timeout).status == 200
        except OSError:
            return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self):
        return self.proc.pid

    def signal(self, signo):
        self.proc.send_signal(signo)

    def stop(self, timeout=20, strict=True):
        """SIGTERM and wait; returns the exit code. After `timeout` seconds it
        kills the daemon, then raises RoostdError, or with `strict=False`
        returns "killed after SIGTERM timeout"."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if strict:
                    raise RoostdError(f"roostd did not stop within {timeout} s of SIGTERM:\n{self.log_tail()}")
                return "killed after SIGTERM timeout"
        return self.proc.returncode

    def restart(self, **start_args):
        """A clean stop and a start on the same data."""
        self.stop()
        return self.start(**start_args)

    def kill9(self):
        """SIGKILL (if it still runs) and reap."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def close(self):
        if self.alive():
            self.kill9()

    def __enter__(self):
        return self if self.alive() else self.start()

    def __exit__(self, *exc):
        self.stop(strict=False)

    # ------------------------------------------------------------------ log
    def log_text(self):
        """Everything this object's roostd processes wrote, oldest start first."""
        return "".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    def log_tail(self, lines=40):
        return "\n".join(self.log_text().splitlines()[-lines:])

    # ------------------------------------------------------------------ HTTP
    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None, token=None, headers=None, raw_body=None, timeout=15):
        """One request on a fresh connection: a `http.Response`."""
        return http.call(self.port, method, path, body, token, headers, raw_body, timeout)

    def request(self, method, path, body=None, headers=None, raw_body=None, timeout=30):
        """One request on a fresh connection: (status, headers, raw bytes); see `http.request`."""
        return http.request(self.port, method, path, body, headers, raw_body, timeout)

    def json(self, method, path, body=None, headers=None):
        """(status, headers, JSON value or None) on a fresh connection."""
        status, hdrs, raw = self.request(method, path, body, headers)
        return status, hdrs, (json.loads(raw) if raw else None)

    def api(self, token=None, timeout=15):
        """A keep-alive client for one thread."""
        return http.Client(self.port, timeout=timeout, token=token, retry_get=True)

    def sign_up(self, username, password="correct horse battery", **profile):
        """Signs a user up (201 or the test fails); returns the body: {"user", "token"}."""
        r = self.call("POST", "/users", {"username": username, "password": password, **profile})
        assert r.status == 201, r
        return r.body

    def new_user(self, name, password="correct horse battery"):
        """Signs up `name` plus a random suffix, with email <that username>@example.com
        (account emails are unique); returns (user _id, token) and remembers the
        username in `usernames` by _id."""
        username = f"{name}-{uuid.uuid4().hex[:6]}"
        body = self.sign_up(username, password, email=f"{username}@example.com")
        self.usernames[body["user"]["_id"]] = username
        return body["user"]["_id"], body["token"]

    def log_in(self, username, password):
        return self.call("POST", "/login", {"username": username, "password": password})


@contextlib.contextmanager
def running_roostd(config, env=None, cls=Roostd, stop_timeout=10):
    """roostd with `config` on a fresh temporary data directory while the
    `with` body runs; stopped (SIGKILL after `stop_timeout` s) and removed after."""
    with tempfile.TemporaryDirectory(prefix="roost-test-") as tmp:
        daemon = cls(tmp, config, env=env)
        try:
            yield daemon.start()
        finally:
            daemon.stop(timeout=stop_timeout, strict=False)


def remote_in_access_log(roostd, request_id):
    """The client address the access log names for `request_id` (waits up to 2.5 s for the line)."""
    for _ in range(50):
        m = re.search(rf"request_id={re.escape(request_id)} remote=(\S+)", roostd.log_text())
        if m:
            return m.group(1)
        time.sleep(0.05)
    raise AssertionError(f"no access-log line for {request_id}")


def rss_kib(pid):
    """The resident set size of process `pid` in KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
