#!/usr/bin/env python3
"""Collections set up at run time (issue #36), two measurements, same run:

1. `schema`: creates into a collection with a 10-property JSON Schema vs the same creates into one
   without (ABBA rounds of wrk -t2 -c32, bench/lua/create_typed.lua, the same valid body on both
   sides). Target: ≥ 90% of the creates without a schema (the median of each round's typed/plain ratio).
2. `index`: a collection of N (300k) documents gets an index through PATCH /admin/collections while
   a client creates into it without pause (8 keep-alive connections, a request at a time each).
   Creates/s while the index builds vs in the seconds before; the longest any request waited during
   the build. Targets: ≥ 50% of the rate before, and no request over 500 ms.

  bench/runtime_collections.py [--roostd .build/release/roostd] [--n 300000] [--rounds 6] [--duration 6s] [--port 18296]
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import benchstats  # noqa: E402

TOKEN = "c" * 40
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["name", "price", "qty", "sku", "email", "created", "tags", "active", "category", "where"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 80},
        "price": {"type": "number", "minimum": 0},
        "qty": {"type": "integer", "minimum": 0},
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
        "email": {"type": "string", "format": "email"},
        "created": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 10},
        "active": {"type": "boolean"},
        "category": {"enum": ["book", "toy", "food", "tool"]},
        "where": {"format": "geo-point"},
    },
}
CONFIG = "log_level: warning\nadmin_token: %s\n%s\n" % (TOKEN, B.NO_RATE_LIMITS)
HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer " + TOKEN}


def admin(port, method, path, body=None):
    c = B.conn(port)
    c.request(method, path, json.dumps(body) if body is not None else None, HEADERS)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data else None)


def seed(port, collection, n):
    def send(start, end):
        c = B.conn(port)
        for s in range(start, end, 100):
            ops = [{"method": "POST", "path": "/" + collection, "body": {"n": i, "k": "k%d" % (i % 97), "text": "document %d" % i}}
                   for i in range(s, min(s + 100, end))]
            c.request("POST", "/_batch", json.dumps({"operations": ops}), HEADERS)
            r = c.getresponse()
            body = r.read()
            assert r.status == 200, body[:300]
        c.close()
    per = (n + 1) // 2
    B.run_threads([lambda a=a: send(a, min(a + per, n)) for a in range(0, n, per)])


def schema_rounds(a, port, proc):
    url = "http://127.0.0.1:%d" % port
    results = {"plain": [], "typed": []}
    for r in range(a.rounds):
        for side in (("plain", "typed") if r % 2 == 0 else ("typed", "plain")):
            B.settle([proc.pid])
            res = B.wrk("create_typed.lua", url, "roost", "/dev/null", duration=a.duration, conns=32, collection=side)
            assert res["status_errors"] == 0, res
            results[side].append(res["rps"])
            B.log("round %d %-5s %8.0f creates/s" % (r, side, res["rps"]))
    # Each round runs both sides back to back, so a round's own ratio is free of the machine's
    # drift between rounds; the figure is the median of those (the ratio of medians is shown too).
    pairs = [t / p for p, t in zip(results["plain"], results["typed"])]
    return statistics.median(results["plain"]), statistics.median(results["typed"]), statistics.median(pairs), results


class Creator:
    """Keep-alive clients creating without pause; every completion's time and latency."""

    def __init__(self, port, collection, conns=8):
        self.port, self.collection, self.conns = port, collection, conns
        self.done, self.stop, self.errors = [], threading.Event(), []
        self.lock = threading.Lock()

    def run(self, k):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        i = 0
        while not self.stop.is_set():
            body = json.dumps({"n": 10_000_000 + k * 1_000_000 + i, "k": "live", "text": "created during the build"})
            t0 = time.monotonic()
            c.request("POST", "/" + self.collection, body, HEADERS)
            r = c.getresponse()
            r.read()
            t1 = time.monotonic()
            with self.lock:
                (self.done if r.status == 201 else self.errors).append((t1, t1 - t0))
            i += 1

    def start(self):
        self.threads = [threading.Thread(target=self.run, args=(k,)) for k in range(self.conns)]
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()

    def window(self, t0, t1):
        with self.lock:
            hits = [lat for t, lat in self.done if t0 <= t < t1]
        return len(hits) / (t1 - t0), (max(hits) if hits else 0.0)

    def slow(self, t0, t1, limit=0.3):
        with self.lock:
            return sorted((round(t - t0, 2), round(lat * 1000)) for t, lat in self.done if t0 <= t < t1 and lat > limit)


def index_build(a, port):
    assert admin(port, "POST", "/admin/collections", {"name": "big", "permission": "public"})[0] == 201
    B.log("seeding %d documents" % a.n)
    seed(port, "big", a.n)
    creator = Creator(port, "big")
    creator.start()
    time.sleep(2)
    before0 = time.monotonic()
    time.sleep(6)
    before1 = time.monotonic()
    assert admin(port, "PATCH", "/admin/collections/big", {"indexes": ["n"]})[0] == 200
    started = time.monotonic()
    while True:
        status, d = admin(port, "GET", "/admin/collections/big")
        if all(i["state"] == "ready" for i in d["indexes"]) and d["indexes"]:
            break
        time.sleep(0.5)  # as the console polls; each look counts the collection's documents
    finished = time.monotonic()
    creator.finish()
    rate_before, worst_before = creator.window(before0, before1)
    rate_during, worst_during = creator.window(started, finished)
    B.log("creates over 300 ms (seconds into the build, ms): %s" % creator.slow(started, finished))
    return {"rate_before": rate_before, "rate_during": rate_during, "worst_before_ms": worst_before * 1000,
            "worst_during_ms": worst_during * 1000, "build_s": finished - started, "errors": len(creator.errors)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--n", type=int, default=300000)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--duration", default="6s")
    ap.add_argument("--port", type=int, default=18296)
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("runtime_collections", fresh=True)
    with open(os.path.join(work, "roost.yaml"), "w") as f:
        f.write(CONFIG)
    proc = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % a.port, "--data-dir", os.path.join(work, "data"),
                    "--config", os.path.join(work, "roost.yaml")], os.path.join(work, "roostd.log"))
    B.wait_http(a.port, "/healthz", proc, "roostd")
    load = B.loadavg()
    assert admin(a.port, "POST", "/admin/collections", {"name": "plain", "permission": "public"})[0] == 201
    assert admin(a.port, "POST", "/admin/collections", {"name": "typed", "permission": "public", "schema": SCHEMA})[0] == 201
    plain, typed, schema_ratio, rounds = schema_rounds(a, a.port, proc)
    build = index_build(a, a.port)
    B.stop(proc)
    build_ratio = build["rate_during"] / build["rate_before"]
    text = "\n".join([
        "### Collections set up at run time (#36): `bench/runtime_collections.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "",
        "`%s`; load average before: %s." % (os.path.relpath(binary, B.ROOT), load),
        "",
        "| measurement | value | compared with | ratio | target |",
        "|---|---:|---:|---:|---|",
        "| creates/s, 10-property schema (wrk -c32, %d rounds ABBA; ratio: median of each round's own, %.2f as medians) | %.0f | %.0f without | %.2f | ≥ 0.90 |" % (a.rounds, typed / plain, typed, plain, schema_ratio),
        "| creates/s while an index builds on %d documents (8 connections) | %.0f | %.0f before | %.2f | ≥ 0.50 |" % (a.n, build["rate_during"], build["rate_before"], build_ratio),
        "| longest create during the build | %.0f ms | %.0f ms before | | ≤ 500 ms |" % (build["worst_during_ms"], build["worst_before_ms"]),
        "",
        "The build took %.1f s; %d creates failed." % (build["build_s"], build["errors"]),
    ]) + "\n"
    print(text)
    if a.record:
        figs = [benchstats.figure("collections.schema_creates", round(typed, 1), "creates/s", "≥ 90% of without a schema",
                                  "creates without a schema", round(plain, 1), round(schema_ratio, 3)),
                benchstats.figure("collections.creates_during_index", round(build["rate_during"], 1), "creates/s",
                                  "≥ 50% of before", "creates/s before", round(build["rate_before"], 1), round(build_ratio, 3),
                                  "index on %d documents built in %.1f s" % (a.n, build["build_s"])),
                benchstats.figure("collections.worst_wait_during_index", round(build["worst_during_ms"], 1), "ms", "≤ 500 ms")]
        benchstats.record("runtime_collections", {"schema": {"plain": plain, "typed": typed, "rounds": rounds}, "index": build}, [], text, figs, load)


if __name__ == "__main__":
    main()
