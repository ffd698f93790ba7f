#!/usr/bin/env python3
"""Referential integrity benchmark (issue #23): what a `restrict` check adds to a delete.

One roostd, two collections seeded alike:
  plain    nothing references it: a delete is the plain path
  guarded  the target of `holders.target` (on_delete: restrict): every delete looks up
           `_refs` (one range read) and finds nothing (the holders reference other
           guarded entities, so `_refs` is not empty)
Rounds alternate plain/guarded (ABBA); each round deletes --per entities with --clients
keep-alive connections (DELETE /<coll>/<id>, each answered 200). Per round: deletes/s and
the server's CPU µs per delete (utime+stime from /proc), the honest cost measure when the
Python client is the bottleneck. Best and median per side; target: guarded costs ≤ 20% more.

  bench/refs.py [--roostd .build/release/roostd] [--n 20000] [--per 4000] [--rounds 4]
                [--clients 8] [--port 18290] [--out FILE.md]

Raw numbers, one JSON line per round, then the run's record (figures) are appended to
bench/results/refs.jsonl (--no-record: not).
"""
import argparse
import functools
import json
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402

CONFIG = """log_level: warning
default_permission: public
references_max_cascade: 1000
collections:
  holders:
    references:
      target: {collection: guarded, on_delete: restrict}
"""


def seed(port, collection, bodies):
    c = B.conn(port)
    ids = []
    for start in range(0, len(bodies), 100):
        ops = [{"method": "POST", "path": "/" + collection, "body": b} for b in bodies[start:start + 100]]
        c.request("POST", "/_batch", json.dumps({"operations": ops}), {"Content-Type": "application/json"})
        r = c.getresponse()
        body = json.loads(r.read())
        assert r.status == 200, body
        ids += [res["body"]["_id"] for res in body["results"]]
    c.close()
    return ids


def delete_all(port, collection, ids, clients):
    chunks = [ids[i::clients] for i in range(clients)]
    failures = []

    def worker(chunk):
        c = B.conn(port)
        for id_ in chunk:
            c.request("DELETE", "/%s/%s" % (collection, id_))
            r = c.getresponse()
            r.read()
            if r.status != 200:
                failures.append(r.status)
        c.close()

    seconds = B.run_threads([functools.partial(worker, ch) for ch in chunks])
    if failures:
        raise SystemExit("%d deletes failed: %s" % (len(failures), failures[:5]))
    return seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--per", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--port", type=int, default=18290)
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the rounds and the run to bench/results/refs.jsonl")
    ap.add_argument("--out")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("refs", fresh=True)
    with open(os.path.join(work, "roost.yaml"), "w") as f:
        f.write(CONFIG)
    proc = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % a.port, "--data-dir", os.path.join(work, "data"),
                    "--config", os.path.join(work, "roost.yaml")], os.path.join(work, "roostd.log"))
    B.wait_http(a.port, "/healthz", proc, "roostd")
    needed = a.per * a.rounds
    B.log("seeding %d plain, %d guarded (+%d referenced), %d holders" % (max(a.n, needed), max(a.n, needed), a.n // 10, a.n // 10))
    pools = {c: seed(a.port, c, [{"n": i, "name": "entity %d" % i} for i in range(max(a.n, needed))]) for c in ("plain", "guarded")}
    kept = seed(a.port, "guarded", [{"n": -i} for i in range(a.n // 10)])
    seed(a.port, "holders", [{"target": {"_type": "ref", "_collection": "guarded", "_id": k}} for k in kept])
    load = B.loadavg()
    results = {"plain": [], "guarded": []}
    order = [("plain", "guarded") if r % 2 == 0 else ("guarded", "plain") for r in range(a.rounds)]
    os.makedirs(os.path.join(B.HERE, "results"), exist_ok=True)
    raw = open(os.path.join(B.HERE, "results", "refs.jsonl") if a.record else os.devnull, "a")
    for r, pair in enumerate(order):
        for side in pair:
            batch, pools[side] = pools[side][:a.per], pools[side][a.per:]
            B.settle([proc.pid])
            cpu0, steal0 = B.proc_cpu_ticks(proc.pid), B.machine_ticks()
            took = delete_all(a.port, side, batch, a.clients)
            cpu = (B.proc_cpu_ticks(proc.pid) - cpu0) / os.sysconf("SC_CLK_TCK")
            row = {"round": r, "side": side, "deletes": len(batch), "seconds": round(took, 4),
                   "deletes_per_s": round(len(batch) / took, 1), "cpu_us_per_delete": round(cpu * 1e6 / len(batch), 1),
                   "steal_pct": round(B.steal_since(steal0), 1), "clients": a.clients, "binary": binary,
                   "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            results[side].append(row)
            raw.write(json.dumps(row) + "\n")
            B.log("round %d %-7s %7.0f deletes/s  %6.1f µs CPU/delete" % (r, side, row["deletes_per_s"], row["cpu_us_per_delete"]))
    raw.close()
    B.stop(proc)

    def summary(side):
        rows = results[side]
        return (max(x["deletes_per_s"] for x in rows), statistics.median(x["deletes_per_s"] for x in rows),
                min(x["cpu_us_per_delete"] for x in rows), statistics.median(x["cpu_us_per_delete"] for x in rows))
    p, g = summary("plain"), summary("guarded")
    cost_cpu = 100.0 * (g[3] / p[3] - 1)
    cost_rate = 100.0 * (p[1] / g[1] - 1)
    lines = ["### A delete with a `restrict` check vs without (#23): `bench/refs.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "",
             "`%s`, %d rounds ABBA, %d deletes a side a round over %d keep-alive connections on 127.0.0.1; "
             "`guarded` is the target of a `restrict` reference field (`_refs` holds %d rows), `plain` is referenced by nothing. "
             "Load average before: %s." % (os.path.relpath(binary, B.ROOT), a.rounds, a.per, a.clients, len(kept), load),
             "",
             "| side | best deletes/s | median | best CPU µs/delete | median |",
             "|---|---:|---:|---:|---:|",
             "| plain | %.0f | %.0f | %.1f | %.1f |" % p,
             "| guarded (restrict) | %.0f | %.0f | %.1f | %.1f |" % g,
             "",
             "The restrict check costs %+.1f%% server CPU per delete (medians) and %+.1f%% in time per delete (median rates). "
             "Target ≤ 20%%: **%s**." % (cost_cpu, cost_rate, "met" if max(cost_cpu, cost_rate) <= 20 else "missed")]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.record:
        B.record("refs", {"plain": dict(zip(("best_rps", "median_rps", "best_cpu_us", "median_cpu_us"), p)),
                          "guarded": dict(zip(("best_rps", "median_rps", "best_cpu_us", "median_cpu_us"), g)),
                          "rounds": a.rounds, "per": a.per, "refs_rows": len(kept)}, [], text,
                 figures.refs(cost_cpu, cost_rate, g[3], p[3]), load)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
