"""roostd under systemd: the unit files, sd_notify (READY, WATCHDOG,
STOPPING), socket activation, and native journald logging."""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid

import pytest

from roost_harness import REPO, Roostd, binary, clean_env, free_port, request

UNIT = REPO / "systemd" / "roostd.service"
SOCKET_UNIT = REPO / "systemd" / "roostd.socket"


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: `make deps` installs the systemd package")
    return path


def test_unit_exposure_is_at_most_1_5(tmp_path):
    analyze = _tool("systemd-analyze")
    out = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", str(UNIT)],
                         capture_output=True, text=True, cwd=tmp_path)
    match = re.search(r"Overall exposure level for roostd\.service: (\d+\.\d+)", out.stdout)
    assert match, f"no exposure score in:\n{out.stdout}\n{out.stderr}"
    assert float(match.group(1)) <= 1.5, out.stdout


def test_units_verify_without_warnings(tmp_path):
    """`systemd-analyze verify` on copies whose ExecStart names a binary that
    exists here (the unit names the installed /usr/local/bin/roostd)."""
    analyze = _tool("systemd-analyze")
    assert binary().exists(), f"build roostd first ({binary()})"
    text = UNIT.read_text()
    assert "ExecStart=/usr/local/bin/roostd " in text
    (tmp_path / "roostd.service").write_text(text.replace("/usr/local/bin/roostd", str(binary())))
    shutil.copy(SOCKET_UNIT, tmp_path / "roostd.socket")
    out = subprocess.run([analyze, "verify", str(tmp_path / "roostd.service"), str(tmp_path / "roostd.socket")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr.strip() == "", out.stderr


def test_unit_has_what_the_issue_asks(tmp_path):
    text = UNIT.read_text()
    for line in ["Type=notify", "WatchdogSec=", "StateDirectory=roost", "ConfigurationDirectory=roost",
                 "RuntimeDirectory=roost", "DynamicUser=yes", "ProtectSystem=strict", "PrivateTmp=yes",
                 "NoNewPrivileges=yes", "SystemCallFilter=", "RestrictAddressFamilies=", "CapabilityBoundingSet=",
                 "ExecReload=", "Requires=roostd.socket"]:
        assert line in text, line
    assert "ListenStream=" in SOCKET_UNIT.read_text()


class NotifyListener:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET."""

    def __init__(self, directory):
        self.path = str(pathlib.Path(directory) / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages = []

    def receive_until(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            self.messages.append(data)
            if predicate(data):
                return data
        raise AssertionError(f"not seen within {timeout}s; got {self.messages}")


def test_sd_notify_ready_watchdog_stopping_in_order(tmp_path):
    listener = NotifyListener(tmp_path)
    env = clean_env(NOTIFY_SOCKET=listener.path, WATCHDOG_USEC=400000)
    daemon = Roostd(tmp_path, env=env, pid_vars=("WATCHDOG_PID",)).start(wait=False)
    try:
        ready = listener.receive_until(lambda m: "READY=1" in m.split("\n"), 30)
        assert "STATUS=Serving on 127.0.0.1:" in ready
        # READY means the listener is bound: the first request succeeds.
        assert daemon.request("GET", "/healthz")[0] == 200
        for _ in range(3):  # every 0.2 s, from the event loop
            listener.receive_until(lambda m: m == "WATCHDOG=1", 5)
        daemon.signal(signal.SIGTERM)
        stopping = listener.receive_until(lambda m: "STOPPING=1" in m.split("\n"), 10)
        assert "STATUS=Stopping" in stopping
        assert daemon.proc.wait(timeout=20) == 0
    finally:
        daemon.kill9()
    kinds = [next((k for k in ("READY=1", "WATCHDOG=1", "STOPPING=1") if k in m.split("\n")), None)
             for m in listener.messages]
    kinds = [k for k in kinds if k]
    assert kinds[0] == "READY=1" and "WATCHDOG=1" in kinds and kinds[-1] != "READY=1"
    assert kinds.index("STOPPING=1") > max(i for i, k in enumerate(kinds) if k == "READY=1")


def test_no_watchdog_pings_for_another_pid(tmp_path):
    """WATCHDOG_PID naming another process turns the watchdog off."""
    listener = NotifyListener(tmp_path)
    env = clean_env(NOTIFY_SOCKET=listener.path, WATCHDOG_USEC=200000, WATCHDOG_PID=1)
    daemon = Roostd(tmp_path, env=env).start(wait=False)
    try:
        listener.receive_until(lambda m: "READY=1" in m.split("\n"), 30)
        with pytest.raises(AssertionError):
            listener.receive_until(lambda m: m == "WATCHDOG=1", 1.0)
    finally:
        daemon.stop()


def _listening_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    return s


def test_socket_activation_uses_the_passed_socket(tmp_path):
    sock = _listening_socket()
    try:
        # --listen is not given and nothing else binds: only fd 3 can serve.
        daemon = Roostd(tmp_path, listen_socket=sock).start(wait=False)
        try:
            daemon.wait_ready()
            status, headers, _ = daemon.request("GET", "/healthz")
            assert status == 200 and headers.get("X-Request-Id")
            assert "using sockets from systemd" in daemon.log_text()
        finally:
            assert daemon.stop() == 0
    finally:
        sock.close()


def test_restart_with_socket_activation_refuses_no_connection(tmp_path):
    sock = _listening_socket()
    port = sock.getsockname()[1]
    try:
        first = Roostd(tmp_path, listen_socket=sock).start()
        assert first.request("POST", "/notes", body=b'{"n":1}')[0] == 201
        assert first.stop() == 0
        # The daemon is down, but the socket lives on in the "service
        # manager" (this test): a client connecting now waits in the backlog.
        results = []

        def client():
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            conn.sendall(b"GET /notes/_count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
            conn.close()
            results.append(data)

        t = threading.Thread(target=client)
        t.start()
        time.sleep(0.5)
        second = Roostd(tmp_path, config=None, listen_socket=sock).start(wait=False)
        try:
            t.join(timeout=30)
            assert results, "the waiting client got no answer"
            assert results[0].startswith(b"HTTP/1.1 200"), results[0][:200]
            assert b'"count":1' in results[0]
        finally:
            assert second.stop() == 0
    finally:
        sock.close()


def _can_unshare():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False, "needs root and unshare(1)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return probe.returncode == 0, probe.stderr.strip()


def test_journald_finds_a_request_by_request_id(tmp_path):
    journald = pathlib.Path("/lib/systemd/systemd-journald")
    if not journald.exists():
        pytest.fail("systemd-journald is missing: `make deps` installs the systemd package")
    _tool("journalctl")
    ok, why = _can_unshare()
    if not ok:
        pytest.skip(f"JOURNALD TEST NOT RUN: this environment cannot create a mount namespace ({why}); "
                    "journald logging is untested here")
    port = free_port()
    (tmp_path / "roost.yaml").write_text("default_permission: public\nlog_target: journal\n")
    out, ready, stop = tmp_path / "journal.json", tmp_path / "ready", tmp_path / "stop"
    script = pathlib.Path(__file__).parent / "scripts" / "journald_sandbox.sh"
    cmd = ["unshare", "-m", "/bin/sh", str(script), str(out), str(ready), str(stop), "--",
           str(binary()), "serve", "--config", str(tmp_path / "roost.yaml"), "--data-dir", str(tmp_path / "data"),
           "--listen", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    request_id = "journal-test-" + uuid.uuid4().hex
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if request(port, "GET", "/healthz", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
            assert time.monotonic() < deadline, "roostd under the private journald did not start"
            time.sleep(0.05)
        status, headers, _ = request(port, "POST", "/journaled", body=b'{"a":1}', headers={"X-Request-Id": request_id})
        assert status == 201 and headers["X-Request-Id"] == request_id
        # A path with a quote, a backslash, a non-UTF-8 byte and an encoded line break (issue 33).
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /journaled/a\"b\\c\xff%0A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      b"X-Request-Id: " + (request_id + "-forge").encode() + b"\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 4")
    finally:
        stop.touch()
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output.decode(errors="replace")
    entries = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    ours = [e for e in entries if e.get("REQUEST_ID") == request_id]
    assert len(ours) == 1, f"{len(entries)} entries, none or several with REQUEST_ID={request_id}"
    entry = ours[0]
    assert entry["SYSLOG_IDENTIFIER"] == "roostd"
    assert entry["PRIORITY"] == "6"
    assert entry["HTTP_METHOD"] == "POST" and entry["HTTP_PATH"] == "/journaled"
    assert entry["HTTP_STATUS"] == "201" and entry["HTTP_ROUTE"] == "/:collection"
    forged = [e for e in entries if e.get("REQUEST_ID") == request_id + "-forge"]
    assert len(forged) == 1, forged
    assert forged[0]["HTTP_PATH"] == "/journaled/a\\x22b\\x5Cc\\xEF\\xBF\\xBD%0A", forged[0]
    assert re.fullmatch(r"GET /journaled/a\\x22b\\x5Cc\\xEF\\xBF\\xBD%0A 4\d\d [\d.]+ms", forged[0]["MESSAGE"]), forged[0]
    assert float(entry["DURATION_MS"]) >= 0
    # Ordinary swift-log entries go to the journal too, with metadata as fields.
    started = [e for e in entries if e.get("MESSAGE") == "roostd listening"]
    assert started and started[0]["LISTEN"] == f"127.0.0.1:{port}" and started[0]["PRIORITY"] == "6"
    # And nothing went to stderr: the journal took it all.
    assert b"roostd listening" not in output
