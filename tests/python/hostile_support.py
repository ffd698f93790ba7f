"""Helpers for test_hostile.py: a roostd that is stopped hard (hostile
requests may have wedged it), a client that checks the error-body and no-5xx
invariants on every answer, /healthz probes in a thread, and an RSS watchdog
that kills the daemon before a runaway request can hurt the machine."""

import pathlib
import threading
import time

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, Roostd, json_query, running_roostd

__all__ = ["ADMIN_TOKEN", "FAST_HASHING", "HostileDaemon", "hostile_roostd", "q", "HealthProbes", "RSSWatch",
           "check_invariants", "guarded_get", "account"]


def q(obj):
    """URL-encodes a JSON value for a query parameter (parentheses stay raw to keep long regexes short)."""
    return json_query(obj, safe="()")


def check_invariants(resp, what):
    """Hole class 10: no 5xx but 503, and every error body is exactly {"error", "description"}."""
    assert resp.status < 500 or resp.status == 503, f"{what}: server error {resp!r}"
    if resp.status >= 400:
        assert isinstance(resp.body, dict) and set(resp.body) == {"error", "description"}, \
            f"{what}: error body is not {{error, description}}: {resp!r}"
        assert isinstance(resp.body["error"], str) and resp.body["error"], f"{what}: {resp!r}"


class HostileDaemon(Roostd):
    """A roostd whose every answer is checked against the invariants."""

    def call(self, method, path, body=None, token=None, headers=None, raw_body=None, timeout=15, check=True):
        """One request on a fresh connection; a Response with `.elapsed` (seconds)."""
        resp = super().call(method, path, body, token, headers, raw_body, timeout)
        if check:
            check_invariants(resp, f"{method} {path[:200]}")
        return resp

    def timed_call(self, limit, method, path, body=None, **kw):
        """A call that must answer within `limit` seconds (a timeout fails the test, not the suite)."""
        try:
            r = self.call(method, path, body, timeout=max(limit * 2, 3), **kw)
        except (TimeoutError, OSError) as e:
            pytest.fail(f"{method} {path[:120]}: no answer within {max(limit * 2, 3)} s ({e!r})")
        assert r.elapsed < limit, f"{method} {path[:120]}: took {r.elapsed:.2f} s (limit {limit} s): {r!r}"
        return r

    def proc_status(self, key):
        """A /proc/<pid>/status value in bytes (VmRSS, VmHWM)."""
        try:
            lines = pathlib.Path(f"/proc/{self.pid}/status").read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        return None  # a process that is exiting has no memory lines

    def thumbnail_files(self, file_id):
        return sorted(p for p in (self.data_dir / "files" / "thumbs").glob(f"*/{file_id}/*") if p.is_file())


def hostile_roostd(config_yaml, grace=3):
    """A HostileDaemon with `config_yaml` on a fresh data directory; stopped with
    SIGKILL `grace` seconds after SIGTERM: a daemon wedged by a hostile request
    must not keep a core busy for minutes after its test failed."""
    return running_roostd(config_yaml, cls=HostileDaemon, stop_timeout=grace)


def account(daemon, username, password="correct horse battery"):
    """Signs `username` up; returns {"id", "token"}."""
    body = daemon.sign_up(username, password)
    return {"id": body["user"]["_id"], "token": body["token"]}


class HealthProbes:
    """`GET /healthz` every ~20 ms on fresh connections in a thread, while the
    body of the `with` runs, and at least `min_probes` times. Latencies in `.latencies`."""

    def __init__(self, daemon, min_probes=8, interval=0.02):
        self.daemon, self.min_probes, self.interval = daemon, min_probes, interval
        self.latencies, self.failures = [], []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set() or len(self.latencies) + len(self.failures) < self.min_probes:
            started = time.monotonic()
            try:
                r = self.daemon.call("GET", "/healthz", timeout=5, check=False)
                if r.status == 200:
                    self.latencies.append(time.monotonic() - started)
                else:
                    self.failures.append(f"status {r.status}")
            except OSError as e:
                self.failures.append(f"{e!r} after {time.monotonic() - started:.2f} s")
            if len(self.latencies) + len(self.failures) > 2000:
                return
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=30)

    @property
    def worst(self):
        return max(self.latencies, default=float("inf"))


class RSSWatch:
    """Samples the daemon's VmRSS every 20 ms while the `with` body runs; kills
    the daemon when it grows by more than `kill_above` bytes (the runaway case
    the test is about), so a failing run stays cheap for the shared machine."""

    def __init__(self, daemon, kill_above=600 * 1024 * 1024):
        self.daemon, self.kill_above = daemon, kill_above
        self.baseline = daemon.proc_status("VmRSS")
        self.baseline_hwm = daemon.proc_status("VmHWM")
        self.peak = self.baseline
        self.killed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            rss = self.daemon.proc_status("VmRSS")
            if rss is None:
                return
            self.peak = max(self.peak, rss)
            if rss - self.baseline > self.kill_above:
                self.killed = True
                self.daemon.proc.kill()
                return
            time.sleep(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        # A peak between two samples still shows in the high-water mark.
        hwm = None if self.killed else self.daemon.proc_status("VmHWM")
        if hwm is not None and hwm > self.baseline_hwm:
            self.peak = max(self.peak, hwm)

    @property
    def growth(self):
        return self.peak - self.baseline


def guarded_get(daemon, path, limit, rss_limit=100 * 1024 * 1024, **kw):
    """GET `path` under an RSS watch: fails (and kills the daemon) when the answer
    takes `limit` seconds or more or memory runs away; fails when RSS grew by
    `rss_limit` or more; checks the error invariants; returns the response."""
    r, error = None, None
    with RSSWatch(daemon) as rss:
        try:
            r = daemon.call("GET", path, timeout=max(2 * limit, 3), check=False, **kw)
        except OSError as e:
            error = e
    if r is None or rss.killed or r.elapsed >= limit:
        daemon.proc.kill()
        daemon.proc.wait()
        took = "no answer" if r is None else f"{r.elapsed:.2f} s (limit {limit} s)"
        pytest.fail(f"GET {path[:100]}: ran away: {error or r!r}, {took}, RSS +{rss.growth >> 20} MB"
                    f"{' (watchdog killed it)' if rss.killed else ''}; daemon killed")
    check_invariants(r, f"GET {path[:100]}")
    assert rss.growth < rss_limit, f"GET {path[:100]}: RSS grew by {rss.growth >> 20} MB: {r!r}"
    return r
