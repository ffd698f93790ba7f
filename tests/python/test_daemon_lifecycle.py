"""Lifecycle and observability of a real roostd: graceful shutdown under
load, SIGHUP reload, the access log, X-Request-Id, /readyz and /metrics."""

import json
import os
import pathlib
import re
import signal
import threading
import time

import pytest

from roost_harness import Roostd, RoostdError


# SQLite's WAL checkpoints run in a service of their own; PostgreSQL checkpoints itself.
FIRST_SERVICES = ["database"] + ([] if os.environ.get("ROOST_TEST_ENGINE") == "postgresql" else ["checkpointer"]) + ["pools"]


def services(log, verb):
    """The services named by `service started` (or `stopped`) lines, in log order."""
    return re.findall(rf"service {verb}\b[^\n]*?service=([\w-]+)", log)


def test_a_failed_start_stops_the_started_services_in_reverse(tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    broken = pathlib.Path(__file__).parent / "scripts_support" / "broken.lua.txt"
    (scripts / "10-broken.lua").write_text(broken.read_text())
    daemon = Roostd(tmp_path, config=f"default_permission: public\nscripts_dir: {scripts}\n")
    with pytest.raises(RoostdError):
        daemon.start(timeout=20)
    assert daemon.proc.wait(timeout=10) != 0
    log = daemon.log_text()
    assert "10-broken.lua:4" in log and "service failed to start" in log and "service=scripts" in log, log
    assert services(log, "started") == FIRST_SERVICES + ["after-hooks"], log
    assert services(log, "stopped") == (FIRST_SERVICES + ["after-hooks"])[::-1], log
    assert "roostd listening" not in log and "Roost 0.2.0 is serving" not in log
    # the data directory is released: a start with good scripts serves
    (scripts / "10-broken.lua").unlink()
    with Roostd(tmp_path, config=None).start() as again:
        assert again.request("GET", "/healthz")[0] == 200


def test_graceful_shutdown_under_load_loses_no_acknowledged_write(tmp_path):
    # One machine generating load is one caller: rate limits off.
    daemon = Roostd(tmp_path, config="default_permission: public\nrate_limits: off\n").start()
    acknowledged, errors = [], []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker):
        n = 0
        while not stop.is_set() and n < 5000:
            n += 1
            try:
                status, _, body = daemon.request("POST", "/ledger", body=json.dumps({"w": worker, "n": n}).encode(), timeout=5)
            except OSError:
                continue  # refused or cut off while stopping: not acknowledged
            if status == 201:
                with lock:
                    acknowledged.append(json.loads(body)["_id"])
            elif status != 503:
                errors.append(status)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    daemon.signal(signal.SIGTERM)
    assert daemon.proc.wait(timeout=20) == 0, daemon.log_text()
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    assert len(acknowledged) > 50, "the load never got going"
    log = daemon.log_text()
    assert "shutting down signal=SIGTERM" in log and "roostd stopped" in log
    # every service started once, in the declared order, and stopped once in reverse, after the drain began
    started, stopped = services(log, "started"), services(log, "stopped")
    assert started[:len(FIRST_SERVICES)] == FIRST_SERVICES and "webhooks" in started and "live" in started, started
    assert stopped == started[::-1], (started, stopped)
    assert log.index("shutting down signal=SIGTERM") < log.index("service stopped"), log

    again = Roostd(tmp_path, config=None).start()
    try:
        status, _, body = again.request("GET", "/ledger/_count")
        assert status == 200
        assert json.loads(body)["count"] >= len(acknowledged)
        missing = [i for i in acknowledged if again.request("GET", f"/ledger/{i}")[0] != 200]
        assert not missing, f"{len(missing)} acknowledged writes lost"
    finally:
        again.stop()


def test_sighup_reloads_permissions_and_log_level(tmp_path):
    daemon = Roostd(tmp_path, config="default_permission: public\ncollections:\n  vault:\n    permission: readonly\n").start()
    try:
        assert daemon.request("POST", "/vault", body=b'{"a":1}')[0] in (401, 403)
        assert daemon.request("GET", "/healthz", headers={"X-Request-Id": "before-reload"})[0] == 200
        daemon.config_path.write_text("default_permission: public\nlog_level: warning\ncollections:\n  vault:\n    permission: public\n"
                                 "  other:\n    indexes: [name]\n")
        daemon.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "configuration reloaded" not in daemon.log_text():
            assert time.monotonic() < deadline, daemon.log_text()
            time.sleep(0.05)
        log = daemon.log_text()
        assert "collections.vault.permission: readonly → public" in log
        assert "log_level: info → warning" in log
        assert "collections.*.indexes" in log  # named as needing a restart
        assert daemon.request("POST", "/vault", body=b'{"a":1}')[0] == 201
        # At warning, the access log (info) is silent.
        assert daemon.request("GET", "/healthz", headers={"X-Request-Id": "after-reload"})[0] == 200
        time.sleep(0.2)
        log = daemon.log_text()
        assert "request_id=before-reload" in log and "request_id=after-reload" not in log
    finally:
        assert daemon.stop() == 0


def test_bad_config_on_sighup_keeps_the_running_settings(tmp_path):
    daemon = Roostd(tmp_path).start()
    try:
        daemon.config_path.write_text("default_permission: nonsense\n")
        daemon.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "configuration reload failed" not in daemon.log_text():
            assert time.monotonic() < deadline, daemon.log_text()
            time.sleep(0.05)
        assert daemon.request("POST", "/things", body=b"{}")[0] == 201
    finally:
        assert daemon.stop() == 0


def test_access_log_has_one_line_per_request_with_its_id(tmp_path):
    daemon = Roostd(tmp_path).start()
    try:
        status, headers, _ = daemon.request("GET", "/things/abc", headers={"X-Request-Id": "client-chosen-42"})
        assert status == 404 and headers["X-Request-Id"] == "client-chosen-42"
        status, headers, _ = daemon.request("GET", "/healthz")
        generated = headers["X-Request-Id"]
        assert generated and generated != "client-chosen-42"
        # An unreasonable id is replaced, not echoed.
        _, headers, _ = daemon.request("GET", "/healthz", headers={"X-Request-Id": "x" * 500})
        assert headers["X-Request-Id"] != "x" * 500
        time.sleep(0.2)
        lines = [l for l in daemon.log_text().splitlines() if "request_id=client-chosen-42" in l]
        assert len(lines) == 1, lines
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info roostd: GET /things/abc 404 \d+\.\d{3}ms "
                        r"request_id=client-chosen-42 remote=127\.0\.0\.1$", lines[0]), lines[0]
        assert sum(f"request_id={generated}" in l for l in daemon.log_text().splitlines()) == 1
    finally:
        daemon.stop()


def _metrics(daemon):
    status, headers, body = daemon.request("GET", "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return body.decode()


def test_metrics_in_prometheus_text_format(tmp_path):
    daemon = Roostd(tmp_path).start()
    try:
        _, _, body = daemon.request("POST", "/birds", body=b'{"name":"robin"}')
        bird = json.loads(body)["_id"]
        assert daemon.request("GET", f"/birds/{bird}")[0] == 200
        assert daemon.request("GET", "/birds/nope")[0] == 404
        text = _metrics(daemon)
        assert 'roost_http_requests_total{method="POST",route="/:collection",status="201"} 1' in text
        assert 'roost_http_requests_total{method="GET",route="/:collection/:id",status="200"} 1' in text
        assert 'roost_http_requests_total{method="GET",route="/:collection/:id",status="404"} 1' in text
        assert re.search(r'roost_http_request_duration_seconds_bucket\{method="GET",route="/:collection/:id",status="200",le="[^"]+"\} 1', text)
        # Raw paths (collection names, ids) never become labels.
        assert bird not in text and "birds" not in text
        for needle in ['roost_queue_depth{queue="reader"}', 'roost_queue_depth{queue="writer"}',
                       'roost_worker_busy_threads{pool="reader"}', 'roost_worker_threads{pool="writer"} 1',
                       'roost_sqlite_seconds_count{op="commit"}', 'roost_sqlite_seconds_count{op="read"}',
                       "roost_thumbnails_generated_total 0", 'roost_webhook_deliveries_total{outcome="delivered"} 0']:
            assert needle in text, needle
        # The create went through a group commit: at least one operation, never fewer than commits.
        commits = float(re.search(r"^roost_write_commits_total (\S+)$", text, re.M).group(1))
        operations = float(re.search(r"^roost_write_operations_total (\S+)$", text, re.M).group(1))
        assert 1 <= commits <= operations
        assert daemon.request("POST", "/metrics", body=b"{}")[0] == 405
        assert daemon.request("GET", "/readyz")[0] == 200
    finally:
        daemon.stop()


def test_threads_carry_their_role_in_the_kernel_name(tmp_path):
    """`top -H` and `ps -L` show what each thread is for; the main thread
    (event loop 0) keeps the process name, so `pgrep roostd` still works."""
    daemon = Roostd(tmp_path).start()
    try:
        tasks = pathlib.Path(f"/proc/{daemon.proc.pid}/task")
        names = {(task / "comm").read_text().strip() for task in tasks.iterdir()}
        for expected in ["roostd", "writer-0", "reader-0", "hasher-0", "checkpointer", "webhook-sched"]:
            assert expected in names, (expected, sorted(names))
        assert (pathlib.Path(f"/proc/{daemon.proc.pid}/comm")).read_text().strip() == "roostd"
    finally:
        daemon.stop()


def kernel_at_least(major, minor):
    release = os.uname().release.split("-")[0].split(".")
    return (int(release[0]), int(release[1])) >= (major, minor)


# Which threads answer requests (the kernel's shortest slice) and which keep the default.
SLICES = [
    ("roostd", True),       # the main thread runs event loop 0
    ("loop-1", True),
    ("reader-0", True),
    ("reader-1", True),
    ("writer-0", False),    # records push attempts in long jobs: a woken request thread must be able to cut in
    ("checkpointer", False),
    ("hasher-0", False),
    ("webhook-sched", False),
]


def test_request_threads_take_the_short_slice(tmp_path):
    """The loops and readers run with the kernel's shortest EEVDF slice (0.1 ms,
    sched_setattr), so a woken one takes the CPU from a busy background thread
    at once instead of at its slice's end; the others keep the default."""
    if not kernel_at_least(6, 12):
        pytest.skip("custom EEVDF slices need Linux 6.12 (this is %s)" % os.uname().release)
    daemon = Roostd(tmp_path, config="loops: 2\nreaders: 2\n").start()
    try:
        slices = {}
        for task in pathlib.Path(f"/proc/{daemon.proc.pid}/task").iterdir():
            found = re.search(r"^se\.slice\s*:\s*(\d+)", (task / "sched").read_text(), re.M)
            if not found:
                pytest.skip("this kernel's /proc/<pid>/task/<tid>/sched shows no se.slice")
            slices.setdefault((task / "comm").read_text().strip(), int(found.group(1)))
        for thread, short in SLICES:
            assert thread in slices, (thread, sorted(slices))
            if short:
                assert slices[thread] == 100_000, (thread, slices[thread])
            else:
                assert slices[thread] > 100_000, (thread, slices[thread])
    finally:
        daemon.stop()
