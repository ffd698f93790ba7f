"""bench/live.py's clients: bench/sseclient.c holding the streams (`Client`), PocketBase's
realtime subscription, the paced writer, and roostd's commit-to-send lag histogram."""
import http.client
import json
import os
import subprocess
import threading
import time

import benchlib as B

COLL = "items"


def build_client():
    """bench/out/sseclient, compiled from bench/sseclient*.c when missing or older."""
    exe = os.path.join(B.OUT, "sseclient")
    sources = [os.path.join(B.HERE, name) for name in ("sseclient.c", "sseclient_stats.c")]
    inputs = sources + [os.path.join(B.HERE, "sseclient.h")]
    if not os.access(exe, os.X_OK) or max(map(os.path.getmtime, inputs)) > os.path.getmtime(exe):
        os.makedirs(B.OUT, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-o", exe] + sources, check=True)
    return exe


class Client:
    """bench/sseclient holding n streams."""

    def __init__(self, exe, port, path, n, pb=None):
        self.p = subprocess.Popen([exe, str(port), path, str(n)] + (["pb"] if pb else []), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        B._procs.append(self.p)
        self.cids = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("sseclient exited while connecting")
            if line.startswith("CID "):
                self.cids.append(line.split()[1])
                if pb and len(self.cids) % 250 == 0:
                    pb(self.cids[-250:])
            elif line.startswith("READY"):
                self.ready = line.split()
                break
        if pb and len(self.cids) % 250:
            pb(self.cids[-(len(self.cids) % 250):])

    def cmd(self, c, expect=None):
        self.p.stdin.write(c + "\n")
        self.p.stdin.flush()
        if expect:
            line = self.p.stdout.readline()
            assert line.startswith(expect), line
            return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}

    def quit(self):
        try:
            self.cmd("QUIT")
        except BrokenPipeError:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def pb_subscriber(port):
    """What subscribes PocketBase realtime client ids to the collection (Client's `pb`)."""
    def subscribe(cids):
        c = B.conn(port)
        for cid in cids:
            c.request("POST", "/api/realtime", json.dumps({"clientId": cid, "subscriptions": [COLL]}),
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            body = r.read()
            if r.status != 204:
                raise SystemExit("PocketBase subscribe: HTTP %d %s" % (r.status, body[:200]))
        c.close()
    return subscribe


def writer(port, path, rate, seconds, threads=8):
    """POSTs rate creates/s for seconds on `threads` keep-alive connections, each at its slot
    (t0 + i/rate) or at once when late. Returns (sent, errors, post latencies ms, ids)."""
    n = int(rate * seconds)
    nxt = [0]
    lock = threading.Lock()
    lat, ids, errors = [], [], []
    pad = "x" * 100
    t0 = time.monotonic() + 0.2

    def work():
        c = B.conn(port, timeout=30)
        while True:
            with lock:
                i = nxt[0]
                if i >= n:
                    return
                nxt[0] += 1
            wait = t0 + i / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            s = time.monotonic()
            body = json.dumps({"n": i, "t": int(time.time() * 1e6), "pad": pad})
            try:
                c.request("POST", path, body, {"Content-Type": "application/json"})
                r = c.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                errors.append(str(e))
                c.close()
                c = B.conn(port, timeout=30)
                continue
            if r.status not in (200, 201):
                errors.append("HTTP %d" % r.status)
                continue
            lat.append((time.monotonic() - s) * 1000)
            d = json.loads(data)
            ids.append(d.get("_id") or d.get("id"))

    B.run_threads([work] * threads)
    elapsed = time.monotonic() - t0
    return {"sent": len(lat), "errors": len(errors), "elapsed": elapsed, "lat": sorted(lat), "ids": ids,
            "first_error": errors[0] if errors else ""}


def lag_buckets(port):
    """roostd's roost_live_lag_seconds histogram: cumulative count per upper bound (seconds, as text)."""
    c = B.conn(port)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        if line.startswith("roost_live_lag_seconds_bucket{le=\""):
            le = line.split("\"")[1]
            out[le] = float(line.rsplit(" ", 1)[1])
    return out


def lag_quantile(buckets, q):
    """The upper bound (ms) of the bucket holding quantile q, from cumulative bucket deltas."""
    if not buckets or not buckets.get("+Inf"):
        return None
    total = buckets["+Inf"]
    for le, n in sorted(((k, v) for k, v in buckets.items() if k != "+Inf"), key=lambda kv: float(kv[0])):
        if n >= q * total:
            return float(le) * 1000
    return float("inf")
