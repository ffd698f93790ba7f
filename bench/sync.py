#!/usr/bin/env python3
"""Offline sync benchmark (issue #15): a client that holds a 100k-entity collection and was
offline while 1% of it changed (updates and deletes) catches up by

  (a) roostd  GET /items/_deltaset?since=<cursor>&limit=1000, paged (sees updates and deletes)
  (b) roostd  full refetch, GET /items?limit=1000, keyset-paged: sort={"_id":1}, query {"_id":{"$gt":last}}
  (c) roostd  full refetch, GET /items?limit=1000&skip=k (offset paging, as a naive client does)
  (d) PocketBase  GET .../records?filter=updated>"<last seen>"&perPage=1000&skipTotal=1 (misses deletes)
  (e) PocketBase  full refetch, keyset-paged on id (for reference)

each in ROUNDS interleaved rounds over one keep-alive connection, every page parsed as a client
would; wall time, body bytes, the server's CPU time and CPU steal per method, best round shown.
Then an empty delta (a cursor at the head) against GET by id: wrk -t2 -c50, interleaved rounds
(bench/lua/delta.lua, bench/lua/get.lua).

Both servers start fresh in bench/out/sync/ with run.sh's settings (roostd items public, indexes
category and n; PocketBase items with the same fields, indexes and public rules, plus its
created/updated autodate fields) and get the same entities as run.sh (bench/seed.py's entity(i)):
roostd through POST /_batch (100 a request), PocketBase through bench/seed.py (/api/batch).

  bench/sync.py [--roostd .build/release/roostd] [--n 100000] [--changes 1000] [--deletes 200]
                [--rounds 3] [--duration 10s] [--port 18280] [--out FILE.md]

Prints a Markdown section (also written to --out) and appends the run to
bench/results/sync.jsonl (--no-record: not).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ churn from importing benchlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402
from seed import entity  # noqa: E402
from sync_clients import COLL, get, measured, pb_list, roost_delta, roost_full_keyset, roost_full_skip  # noqa: E402


def roost_seed(port, n, threads=4, per=100):
    """POSTs run.sh's entities 0..n-1 through /_batch (`per` a request, `threads` connections);
    returns (their ids, seconds)."""
    ids = [None] * n

    def send(holder, rng):
        c = holder["c"] = holder.get("c") or B.conn(port)
        ops = [{"method": "POST", "path": "/" + COLL, "body": entity(i)} for i in rng]
        for i, res in zip(rng, B.post_json(c, "/_batch", {"operations": ops}, what="POST /_batch")["results"]):
            ids[i] = res["body"]["_id"]

    return ids, B.in_chunks(0, n, per, threads, send, what="roostd seeding")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--deletes", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--port", type=int, default=18280)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--out")
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the run to bench/results/sync.jsonl")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("sync")
    B.require_free(a.port, a.port + 10)
    load_before = B.loadavg()
    roost = B.start_roostd(binary, a.port, work, {COLL: ["category", "n"]})
    pb = B.PB(a.port + 10, work)
    pb.create_collection(COLL, [{"name": "category", "type": "text"}, {"name": "n", "type": "number"},
                                {"name": "name", "type": "text"}, {"name": "location", "type": "json"}],
                         indexes=("category", "n"))
    pids = {"roostd": roost.pid, "pb": pb.proc.pid}

    B.log("seeding roostd with %d entities (POST /_batch, 100 each)" % a.n)
    ids, secs = roost_seed(a.port, a.n)
    B.log("  %.1f s (%.0f/s)" % (secs, a.n / secs))
    B.log("seeding PocketBase with %d entities (bench/seed.py, /api/batch of 500)" % a.n)
    pb_ids_file = os.path.join(work, "pb-ids.txt")
    out = subprocess.run([sys.executable, os.path.join(B.HERE, "seed.py"), "pb", pb.url, COLL, str(a.n), pb_ids_file,
                          "--token", pb.token, "--batch", "500", "--threads", "2", "--deadline", "300"],
                         capture_output=True, text=True, timeout=400)
    if out.returncode != 0:
        raise SystemExit("PocketBase seeding failed: " + out.stdout + out.stderr)
    B.log("  " + out.stdout.strip())
    pb_ids = open(pb_ids_file).read().split()

    # The client's starting point: a full initial sync (roostd, _deltaset without since), and
    # PocketBase's newest `updated` (what a polling client remembers).
    B.settle(pids.values())
    init = measured(roost_delta, [roost.pid], a.port, None, a.limit)
    assert init.changed == a.n, init.changed
    cursor0 = init.cursor
    c = B.conn(pb.port)
    _, body, _ = get(c, "/api/collections/%s/records?perPage=1&skipTotal=1&sort=-updated" % COLL)
    pb_since = json.loads(body)["items"][0]["updated"]
    c.close()
    B.log("initial _deltaset sync: %d entities, %d pages, %.2f s, %.1f MB; PocketBase's newest updated %s"
          % (init.changed, init.pages, init.seconds, init.body / 1e6, pb_since))
    time.sleep(0.05)

    # 1% changes, the same on both servers: updates (merge patch) and deletes.
    rnd = random.Random(15)
    picked = rnd.sample(range(a.n), a.changes)
    deletes, updates = picked[:a.deletes], picked[a.deletes:]
    ops = [("PATCH", i) for i in updates] + [("DELETE", i) for i in deletes]
    rnd.shuffle(ops)
    c = B.conn(a.port)
    for k in range(0, len(ops), 100):
        batch = [{"method": m, "path": "/%s/%s" % (COLL, ids[i]), **({"body": {"name": "changed %d" % i, "v": 2}}
                                                                      if m == "PATCH" else {})} for m, i in ops[k:k + 100]]
        B.post_json(c, "/_batch", {"operations": batch}, what="roostd changes")
    c.close()
    c = B.conn(pb.port)
    recs = "/api/collections/%s/records/" % COLL
    for k in range(0, len(ops), 500):
        reqs = [{"method": m, "url": recs + pb_ids[i], **({"body": {"name": "changed %d" % i}} if m == "PATCH" else {})}
                for m, i in ops[k:k + 500]]
        B.post_json(c, "/api/batch", {"requests": reqs}, {"Authorization": pb.token}, what="PocketBase changes")
    c.close()
    B.log("changed %d entities on each server: %d updates, %d deletes" % (a.changes, len(updates), len(deletes)))
    dead = {ids[i] for i in deletes}
    live_ids = os.path.join(work, "roost-ids.txt")
    with open(live_ids, "w") as f:
        f.write("\n".join(x for x in ids if x not in dead) + "\n")

    methods = [
        ("roostd _deltaset since the cursor", "roostd", lambda: roost_delta(a.port, cursor0, a.limit)),
        ("roostd full refetch, keyset (sort _id, $gt)", "roostd", lambda: roost_full_keyset(a.port, a.limit)),
        ("roostd full refetch, skip/limit", "roostd", lambda: roost_full_skip(a.port, a.limit)),
        ('PocketBase filter=updated>"…"', "pb", lambda: pb_list(pb, 'updated>"%s"' % pb_since, a.limit)),
        ("PocketBase full refetch, keyset (sort id, id>)", "pb", lambda: pb_list(pb, "", a.limit, keyset=True)),
    ]
    rows = {m[0]: [] for m in methods}
    head_cursor = None
    for rnd_no in range(1, a.rounds + 1):
        for name, server, fn in methods:
            B.settle(pids.values())
            res = measured(fn, [pids[server]])
            rows[name].append(res)
            if res.cursor:
                head_cursor = res.cursor
            B.log("round %d %-48s %7.3f s  %6d pages  %9d body bytes  changed %6d deleted %4d  server CPU %.2f s  steal %.0f%%"
                  % (rnd_no, name, res.seconds, res.pages, res.body, res.changed, res.deleted, res.server_cpu, res.steal))

    d = rows[methods[0][0]][0]
    assert d.changed == len(updates) and d.deleted == len(deletes), (d.changed, d.deleted)

    # Empty delta against GET by id.
    wrk_rows = {"GET /items/:id": [], "GET /items/_deltaset?since=<head> (empty)": []}
    url = "http://127.0.0.1:%d" % a.port
    for rnd_no in range(1, a.rounds + 1):
        for name, script in (("GET /items/:id", "get.lua"), ("GET /items/_deltaset?since=<head> (empty)", "delta.lua")):
            B.settle(pids.values())
            before = B.machine_ticks()
            r = B.wrk(script, url, "roost", live_ids, duration=a.duration, env={"BENCH_CURSOR": head_cursor},
                      raw=os.path.join(work, "wrk-%s-r%d.txt" % (script.split(".")[0], rnd_no)))
            r["steal"] = B.steal_since(before)
            wrk_rows[name].append(r)
            B.log("round %d %-44s %8.0f req/s  p50 %5.0f us  p99 %6.0f us  non-2xx %d  steal %.0f%%"
                  % (rnd_no, name, r["rps"], r["p50_us"], r["p99_us"], r["status_errors"], r["steal"]))
    # One empty delta's body, for the record.
    c = B.conn(a.port)
    _, empty_body, empty_head = get(c, "/%s/_deltaset?since=%s" % (COLL, head_cursor))
    _, one_body, one_head = get(c, "/%s/%s" % (COLL, ids[[i for i in range(a.n) if ids[i] not in dead][0]]))
    c.close()

    # ---------------------------------------------------------------- report
    best = {k: min(v, key=lambda r: r.seconds) for k, v in rows.items()}
    # the baseline is the faster of roostd's two full refetches
    full = min((best[methods[1][0]], best[methods[2][0]]), key=lambda r: r.seconds)
    full_name = methods[1][0] if full is best[methods[1][0]] else methods[2][0]
    delta = best[methods[0][0]]
    L = []
    L.append("### Offline sync (#15): `bench/sync.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    L.append("")
    L.append("%d entities in each server (run.sh's entities), then %d changed on each: %d updates (merge patch), "
             "%d deletes. The client syncs from before the changes over one keep-alive connection, pages of %d, "
             "parsing every page; %d interleaved rounds, best shown (all rounds' seconds beside it). Server CPU is the "
             "server process's user+system time over the sync. Load average before: %s."
             % (a.n, a.changes, len(updates), len(deletes), a.limit, a.rounds, load_before))
    L.append("")
    L.append("| method | best s | rounds (s) | pages | body bytes | server CPU s | changed | deleted | steal | faster roostd full refetch ÷ this (time / bytes) |")
    L.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for name, _, _ in methods:
        r = best[name]
        L.append("| %s | %.3f | %s | %d | %s | %.2f | %d | %d | %.0f%% | %.0f× / %.0f× |"
                 % (name, r.seconds, ", ".join("%.3f" % x.seconds for x in rows[name]), r.pages, format(r.body, ","),
                    r.server_cpu, r.changed, r.deleted, r.steal, full.seconds / r.seconds, full.body / r.body))
    L.append("")
    L.append("Initial full sync through `_deltaset` without `since` (before the changes, once): %.2f s, %d pages, %s bytes, server CPU %.2f s."
             % (init.seconds, init.pages, format(init.body, ","), init.server_cpu))
    L.append("")
    L.append("Empty delta vs GET by id (roostd, `wrk -t2 -c50 -d%s`, %d interleaved rounds, best shown; an empty delta "
             "answers %d body bytes, a GET by id %d):" % (a.duration, a.rounds, len(empty_body), len(one_body)))
    L.append("")
    L.append("| request | best req/s | rounds | p50 µs | p99 µs | steal |")
    L.append("|---|---:|---|---:|---:|---:|")
    wbest = {}
    for name, rs in wrk_rows.items():
        b = max(rs, key=lambda r: r["rps"])
        wbest[name] = b
        L.append("| %s | %.0f | %s | %.0f | %.0f | %.0f%% |" % (name, b["rps"], ", ".join("%.0f" % r["rps"] for r in rs),
                                                            b["p50_us"], b["p99_us"], b["steal"]))
    g, e = wbest["GET /items/:id"], wbest["GET /items/_deltaset?since=<head> (empty)"]
    L.append("")
    ratio_t = full.seconds / delta.seconds
    ratio_b = full.body / delta.body
    L.append("Targets: delta ≥ 20× less time and bytes than a full refetch: **%s** (%.0f× time, %.0f× bytes, against the "
             "faster full refetch, %s; server CPU %.0f×); empty delta costs no more than a GET by id: **%s** (%.0f vs %.0f req/s, %.0f%%)."
             % ("met" if ratio_t >= 20 and ratio_b >= 20 else "missed", ratio_t, ratio_b, full_name,
                full.server_cpu / max(delta.server_cpu, 0.01),
                "met" if e["rps"] >= g["rps"] * 0.97 else "missed", e["rps"], g["rps"], 100 * e["rps"] / g["rps"]))
    metrics = {
        "methods": {name: {"best_s": round(best[name].seconds, 3), "body_bytes": best[name].body,
                           "server_cpu_s": round(best[name].server_cpu, 2), "pages": best[name].pages}
                    for name, _, _ in methods},
        "get_rps": round(g["rps"]), "empty_delta_rps": round(e["rps"])}
    B.publish("sync", "\n".join(L) + "\n", a.out, a.record, metrics,
        [{"target": "delta ≥ 20× less time and bytes than a full refetch",
          "measured": "%.0f× time, %.0f× bytes" % (ratio_t, ratio_b),
          "verdict": "met" if ratio_t >= 20 and ratio_b >= 20 else "missed"},
         {"target": "empty delta costs no more than a GET by id",
          "measured": "%.0f vs %.0f req/s (%.0f%%)" % (e["rps"], g["rps"], 100 * e["rps"] / g["rps"]),
          "verdict": "met" if e["rps"] >= g["rps"] * 0.97 else "missed"}], figures.sync(metrics), load_before)


if __name__ == "__main__":
    main()
