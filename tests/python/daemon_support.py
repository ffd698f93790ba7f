"""Helpers for the daemon-level tests: start roostd with a chosen
environment, inherited sockets and a log file; talk HTTP to it."""

import http.client
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
BINARY = pathlib.Path(os.environ.get("ROOSTD", str(REPO / ".build" / "debug" / "roostd")))


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


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_request(port, method, path, body=None, headers=None, timeout=10):
    """One request on a fresh connection: (status, headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        hdrs = dict(headers or {})
        if body is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def clean_env(**extra):
    """The test's environment without anything systemd-related, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NOTIFY_SOCKET", "WATCHDOG_", "LISTEN_", "JOURNAL_STREAM", "ROOST_"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Daemon:
    """One roostd process. `pid_vars` ("WATCHDOG_PID", "LISTEN_PID") are set
    to the daemon's own pid through `sh -c '... exec'`, as systemd would.
    `listen_socket` is passed as fd 3 with LISTEN_FDS=1."""

    def __init__(self, tmp, config="default_permission: public\n", args=(), env=None,
                 pid_vars=(), listen_socket=None, port=None, data_dir=None):
        self.tmp = pathlib.Path(tmp)
        self.config = self.tmp / "roost.yaml"
        if not self.config.exists() or config is not None:
            self.config.write_text(config or "")
        self.data_dir = data_dir or (self.tmp / "data")
        self.port = port if port is not None else (listen_socket.getsockname()[1] if listen_socket else free_port())
        self.log_path = self.tmp / f"roostd-{time.monotonic_ns()}.log"
        argv = [str(BINARY), "serve", "--config", str(self.config), "--data-dir", str(self.data_dir)]
        if listen_socket is None:
            argv += ["--listen", f"127.0.0.1:{self.port}"]
        argv += list(args)
        env = dict(env or clean_env())
        pass_fds = ()
        if listen_socket is not None:
            env["LISTEN_FDS"] = "1"
            pid_vars = tuple(pid_vars) + ("LISTEN_PID",)
            pass_fds = (listen_socket.fileno(),)
        if pid_vars:
            # exec keeps the wrapper's pid, so the variables name the daemon,
            # and the passed socket moves to fd 3 (SD_LISTEN_FDS_START).
            fd = listen_socket.fileno() if listen_socket is not None else -1
            argv = [sys.executable, "-c", _EXEC_WRAPPER, str(fd), ",".join(pid_vars)] + argv
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT, pass_fds=pass_fds)

    @property
    def base(self):
        return f"127.0.0.1:{self.port}"

    def wait_ready(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"roostd exited with {self.proc.returncode}:\n{self.text()}")
            try:
                if self.request("GET", "/healthz", timeout=1)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"roostd did not answer /healthz:\n{self.text()}")

    def request(self, method, path, body=None, headers=None, timeout=10):
        return http_request(self.port, method, path, body, headers, timeout)

    def text(self):
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def signal(self, signo):
        self.proc.send_signal(signo)

    def stop(self, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("roostd did not stop within the stop timeout")
        self.log.close()
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()
