#!/usr/bin/env python3
"""Query scaling benchmark (issue #22): the same query shapes at growing collection sizes,
roostd against PocketBase, both seeded through their APIs with the same documents.

  bench/scale.py [--sizes 10000,100000,1000000] [--duration 5s] [--conns 8] [--threads 2]
                 [--rounds 1] [--shapes a,b,...] [--no-pb] [--port 18380]
                 [--roostd .build/release/roostd] [--jsonl bench/results/scale.jsonl] [--reuse]

--reuse starts both servers on the data the previous run left in bench/out/scale/ and measures (or
grows) it from there: `--sizes 1000000 --reuse --shapes geo_box,near` re-measures 1M without re-seeding.

One collection per server grows from size to size (10k, then 90k more, then 900k more): each
size is measured on the collection as it stands, so seeding costs 1M documents in all, not 1.11M.

Documents (deterministic from their number i, the same on both servers):
  roostd      {"n": 0..3000, "loc": [lng, lat], "name": "item <i>"}   indexes [n, "loc:geo"]
  PocketBase  {"n": 0..3000, "lng": lng, "lat": lat, "name": "item <i>"}   SQL indexes on n, lng, lat
with (lng, lat) uniform in a 0.17 x 0.087 degree box (central Paris, about 12.5 x 9.7 km).
roostd is seeded through POST /_batch (100 creates a request, --seed-threads client threads),
PocketBase through POST /api/batch (--pb-batch creates a request, default 1000, 2 client threads); both measured.

PocketBase has no spatial index: its geo shapes are its best equivalent, a range filter on
the indexed lng and lat number fields for $geoWithin $box, and sort=geoDistance(...) (a full
scan: nothing else gives an exact nearest-first order) for $nearSphere. Every PocketBase list
uses skipTotal=1 (no COUNT), as roostd answers without a total unless asked.

Each shape is checked before it is measured: both servers must answer 200 with the expected
number of items (20, or 50 for the plain page) and the items must satisfy the shape (sorted,
in range, inside the box, the same n values as the other server where the order is defined).
roostd's plan for each shape (?explain=true with the admin token) goes into the JSON lines.

Writes: one JSON line per (size, shape) and per seeding step to --jsonl, then the run's record
(its figures, for bench/report.py; --no-record: none of it), a Markdown report to
bench/out/scale/report.md (and stdout). Every process started is stopped on exit.
"""
import argparse
import atexit
import json
import os
import random
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
from scale_data import ADMIN_TOKEN, COLL, PP, RP, f, get, items_of, q, seed_pb, seed_roost  # noqa: E402
from scale_report import figures as scale_figures, report  # noqa: E402
from scale_reuse import PBKeep, rebuild_ids, start_roostd_keep  # noqa: E402
from scale_shapes import build_shapes, walk_cursors  # noqa: E402


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--duration", default="5s")
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds per shape; best round kept")
    ap.add_argument("--shapes", default="", help="comma-separated shape keys (default: all)")
    ap.add_argument("--no-pb", action="store_true")
    ap.add_argument("--port", type=int, default=18380)
    ap.add_argument("--roostd")
    ap.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite",
                    help="roostd's database: SQLite in its data directory, or a throwaway PostgreSQL (durable, "
                         "shared_buffers=1GB: the 1M collection with its indexes, about 800 MB, fits, as an operator "
                         "sizes it (PostgreSQL's guide: a quarter of RAM) on the same machine")
    ap.add_argument("--seed-threads", type=int, default=4, help="roostd seeding client threads")
    ap.add_argument("--pb-seed-threads", type=int, default=2)
    ap.add_argument("--pb-batch", type=int, default=1000, help="creates per PocketBase /api/batch (its maxRequests is set to 1000)")
    ap.add_argument("--jsonl", default=os.path.join(B.HERE, "results", "scale.jsonl"))
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="append nothing to --jsonl (neither the per-shape lines nor the run's record)")
    ap.add_argument("--workdir", default=os.path.join(B.OUT, "scale"))
    ap.add_argument("--reuse", action="store_true",
                    help="start both servers on the data a previous run left in --workdir (and its id files) and "
                         "grow it from there; e.g. `--sizes 1000000 --reuse --shapes geo_box,near` re-measures 1M without re-seeding")
    a = ap.parse_args()
    if a.engine == "postgresql" and a.reuse:
        raise SystemExit("--reuse keeps SQLite's data directory only; run PostgreSQL without it")
    a.workdir = os.path.abspath(a.workdir)
    sizes = sorted(int(s) for s in a.sizes.split(","))
    wanted = set(a.shapes.split(",")) if a.shapes else None
    B.raise_nofile()
    os.makedirs(a.workdir, exist_ok=True)
    os.makedirs(os.path.dirname(a.jsonl), exist_ok=True)
    binary = B.roostd_binary(a.roostd)
    rev = subprocess.run(["git", "-C", B.ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    run_id = time.strftime("%Y%m%dT%H%M%S")
    base = {"run": run_id, "rev": rev, "duration": a.duration, "conns": a.conns, "threads": a.threads,
            "nproc": os.cpu_count(), "engine": a.engine}
    database_yaml = ""
    if a.engine == "postgresql":
        sys.path.insert(0, os.path.join(B.ROOT, "tests"))
        from roost_harness.postgres import DURABLE, ThrowawayPostgres
        pg = ThrowawayPostgres(durability=DURABLE, settings="-c shared_buffers=1GB").start()
        atexit.register(pg.stop)
        database_yaml = "database_url: %s\n" % pg.database("scale")
    jl = open(a.jsonl if a.record else os.devnull, "a")

    def emit(rec):
        rec = dict(base, **rec)
        jl.write(json.dumps(rec) + "\n")
        jl.flush()

    load_before = B.loadavg()
    B.log("run %s, roostd %s (%s) on %s, sizes %s, load average %s" % (run_id, binary, rev, a.engine, sizes, load_before))
    reuse = a.reuse and os.path.exists(os.path.join(a.workdir, "roost-data"))
    if reuse:
        roost = start_roostd_keep(binary, a.port, a.workdir)
    else:
        roost = B.start_roostd(binary, a.port, a.workdir, {COLL: ["n", '"loc:geo"']},
                               extra_yaml="admin_token: %s\n%s" % (ADMIN_TOKEN, database_yaml))
    pb = None
    pids = [roost.pid]
    if not a.no_pb:
        if reuse:
            pb = PBKeep(a.port + 10, a.workdir)
        else:
            pb = B.PB(a.port + 10, a.workdir)
            pb.create_collection(COLL, [{"name": "n", "type": "number"}, {"name": "lng", "type": "number"},
                                        {"name": "lat", "type": "number"}, {"name": "name", "type": "text"}],
                                 indexes=("n", "lng", "lat"))
        pids.append(pb.proc.pid)
    pb_version = subprocess.run([B.pb_binary(), "--version"], capture_output=True, text=True).stdout.strip() if pb else ""
    base["pocketbase"] = pb_version
    admin = {"Authorization": "Bearer " + ADMIN_TOKEN}
    roost_ids = [None] * sizes[-1]
    pb_ids = [None] * sizes[-1]
    have = 0
    if reuse and not os.path.exists(os.path.join(a.workdir, "roost-ids.txt")) and (not wanted or "get" in wanted):
        rebuild_ids(a.port, pb, a.workdir)
    if reuse and not os.path.exists(os.path.join(a.workdir, "roost-ids.txt")):
        st, data, _, _ = get(a.port, RP + "/_count")
        have = data["count"]
        B.log("reusing the kept data in %s: %d documents (no id files: GET by id not measured)" % (a.workdir, have))
    elif reuse:
        # the kept data: both servers must hold the same first `have` documents as the ids files
        rid = open(os.path.join(a.workdir, "roost-ids.txt")).read().split()
        pid = open(os.path.join(a.workdir, "pb-ids.txt")).read().split() if pb else []
        have = len(rid)
        if have > sizes[0] or (pb and len(pid) != have):
            raise SystemExit("--reuse: the kept data holds %d documents (PocketBase %d); sizes must be >= that" % (have, len(pid)))
        roost_ids[:have] = rid
        if pb:
            pb_ids[:have] = pid
        B.log("reusing the kept data in %s: %d documents" % (a.workdir, have))
    rng = random.Random(22)
    results = []  # (size, shape, roost, pb)
    seeds = []
    pb_near_sort = None
    for size in sizes:
        # ---- grow both collections to `size`
        if size > have:
            secs = seed_roost(a.port, have, size, roost_ids, a.seed_threads)
            B.log("roostd: seeded %d..%d in %.1fs (%.0f docs/s, /_batch of 100, %d threads)" % (
                have, size, secs, (size - have) / secs, a.seed_threads))
            emit({"kind": "seed", "server": "roostd", "from": have, "to": size, "seconds": round(secs, 2),
                  "docs_per_s": round((size - have) / secs), "method": "/_batch x100, %d threads" % a.seed_threads})
            seeds.append(("roostd", have, size, secs))
            if pb:
                secs = seed_pb(pb, have, size, pb_ids, a.pb_seed_threads, a.pb_batch)
                B.log("PocketBase: seeded %d..%d in %.1fs (%.0f docs/s, /api/batch of %d, %d threads)" % (
                    have, size, secs, (size - have) / secs, a.pb_batch, a.pb_seed_threads))
                emit({"kind": "seed", "server": "pocketbase", "from": have, "to": size, "seconds": round(secs, 2),
                      "docs_per_s": round((size - have) / secs), "method": "/api/batch x%d, %d threads" % (a.pb_batch, a.pb_seed_threads)})
                seeds.append(("PocketBase", have, size, secs))
        else:
            B.log("both servers already hold %d documents (kept data)" % size)
        have = size
        if None not in roost_ids[:size]:
            with open(os.path.join(a.workdir, "roost-ids.txt"), "w") as fh:
                fh.write("\n".join(roost_ids[:size]) + "\n")
        if pb and None not in pb_ids[:size]:
            with open(os.path.join(a.workdir, "pb-ids.txt"), "w") as fh:
                fh.write("\n".join(pb_ids[:size]) + "\n")
        st, data, _, _ = get(a.port, RP + "/_count")
        if st != 200 or data.get("count") != size:
            raise SystemExit("roostd holds %s documents, expected %d" % (data, size))
        if pb:
            st, data, _, _ = get(pb.port, PP + "?perPage=1")
            if st != 200 or data.get("totalItems") != size:
                raise SystemExit("PocketBase holds %s documents, expected %d" % (data.get("totalItems"), size))
            if pb_near_sort is None:
                st, data, _, _ = get(pb.port, PP + "?perPage=3&skipTotal=1&sort=" + f("geoDistance(lng,lat,2.3,48.85)"))
                pb_near_sort = st == 200
                B.log("PocketBase sort=geoDistance(...): HTTP %d%s" % (st, "" if pb_near_sort else " %s" % data))
        # ---- keyset cursors from walking pages
        keyset_page = min(1000, size // 20 - 60)
        cursors = {}
        for key, sort in (("keyset", None), ("keyset_sort", {"n": 1})):
            if wanted and key not in wanted:
                continue
            cur, items, secs = walk_cursors(a.port, sort, keyset_page, 10)
            cursors[key] = cur
            # the keyset page must be the same as the offset page
            st, data, _, _ = get(a.port, RP + "?limit=20&skip=%d" % ((keyset_page - 1) * 20) + ("&sort=" + q(sort) if sort else ""))
            same = [d["_id"] for d in data] == [d["_id"] for d in items]
            B.log("walked %d pages of %s in %.1fs; page %d by after= %s page %d by skip" % (
                keyset_page + 9, key, secs, keyset_page, "equals" if same else "DIFFERS FROM", keyset_page))
            emit({"kind": "keyset_walk", "size": size, "shape": key, "pages": keyset_page + 9, "seconds": round(secs, 2),
                  "after_page_equals_skip_page": same})
        shapes = build_shapes(size, roost_ids, pb_ids, cursors, keyset_page, rng, pb_near_sort)
        for sh in shapes:
            if wanted and sh.key not in wanted:
                continue
            # ---- correctness: one request of each path kind on both servers (first 3 paths)
            problems = []
            for k in range(min(3, len(sh.roost_paths))):
                st, data, hdr, rms = get(a.port, sh.roost_paths[k])
                r_items = [data] if sh.key == "get" and st == 200 else items_of("roost", data)
                if st != 200 or r_items is None or len(r_items) != sh.expect:
                    problems.append("roostd %s: HTTP %d, %s items (want %d)" % (sh.roost_paths[k][:120], st,
                                    None if r_items is None else len(r_items), sh.expect))
                    continue
                if sh.check and sh.key != "get":
                    e = sh.check("roost", k, r_items)
                    if e:
                        problems.append("roostd: " + e)
                if pb and sh.pb_paths:
                    st, data, _, pms = get(pb.port, sh.pb_paths[k])
                    p_items = [data] if sh.key == "get" and st == 200 else items_of("pb", data)
                    if st != 200 or p_items is None or len(p_items) != sh.expect:
                        problems.append("PocketBase %s: HTTP %d, %s items (want %d) %s" % (sh.pb_paths[k][:120], st,
                                        None if p_items is None else len(p_items), sh.expect,
                                        "" if st == 200 else str(data)[:200]))
                        continue
                    if sh.check and sh.key != "get":
                        e = sh.check("pb", k, p_items)
                        if e:
                            problems.append("PocketBase: " + e)
                    if sh.compare:
                        e = sh.compare(r_items, p_items)
                        if e:
                            problems.append(e)
                    if sh.key == "get" and (r_items[0]["n"], r_items[0]["name"]) != (p_items[0]["n"], p_items[0]["name"]):
                        problems.append("GET by id: different documents")
            st, plan, _, ems = get(a.port, sh.roost_paths[0] + ("&" if "?" in sh.roost_paths[0] else "?") + "explain=true", admin)
            plan_text = json.dumps(plan)[:4000] if st == 200 else "HTTP %d %s" % (st, str(plan)[:200])
            for pr in problems:
                B.log("  CHECK %s @%d: %s" % (sh.key, size, pr))
            # ---- measure, interleaved rounds, best kept
            best = {"roost": None, "pb": None}
            for rnd in range(a.rounds):
                for api, port, paths in (("roost", a.port, sh.roost_paths), ("pb", pb.port if pb else 0, sh.pb_paths)):
                    if api == "pb" and (not pb or not paths):
                        continue
                    pf = os.path.join(a.workdir, "paths-%s-%s.txt" % (api, sh.key))
                    with open(pf, "w") as fh:
                        fh.write("\n".join(paths) + "\n")
                    B.settle(pids, limit=15)
                    before = B.machine_ticks()
                    res = B.wrk("paths.lua", "http://127.0.0.1:%d" % port, api, pf, duration=a.duration,
                                threads=a.threads, conns=a.conns, env={"BENCH_PATHS": pf},
                                raw=os.path.join(a.workdir, "wrk-%d-%s-%s-r%d.txt" % (size, sh.key, api, rnd)))
                    res["steal"] = round(B.steal_since(before), 1)
                    if res["status_errors"] or res["socket_errors"]:
                        B.log("  %s/%s: %d non-2xx, %d socket errors" % (sh.key, api, res["status_errors"], res["socket_errors"]))
                    if best[api] is None or res["rps"] > best[api]["rps"]:
                        best[api] = res
            r, p = best["roost"], best["pb"]
            ratio = r["rps"] / p["rps"] if p and p["rps"] > 0 else None
            B.log("%7d %-12s roostd %8.1f/s (p50 %6.1f ms)  PocketBase %s  ratio %s%s" % (
                size, sh.key, r["rps"], r["p50_us"] / 1000,
                "%8.1f/s (p50 %7.1f ms)" % (p["rps"], p["p50_us"] / 1000) if p else "       -",
                "%.1fx" % ratio if ratio else "-", "" if not problems else "  [%d check problem(s)]" % len(problems)))
            emit({"kind": "shape", "size": size, "shape": sh.key, "label": sh.label, "indexed": sh.indexed,
                  "expect_items": sh.expect, "roost": r, "pb": p, "ratio": round(ratio, 2) if ratio else None,
                  "check_problems": problems, "roost_plan": plan_text, "note": sh.note, "loadavg": B.loadavg()})
            results.append((size, sh, r, p, problems, plan_text))
    jl.close()
    text = report(a, run_id, rev, pb_version, sizes, seeds, results)
    if a.record:
        B.record("scale", {"run": run_id, "rev": rev, "sizes": sizes, "pocketbase": pb_version, "engine": a.engine}, [], text,
                 scale_figures(results, a.engine), load_before, path=a.jsonl)


if __name__ == "__main__":
    main()
