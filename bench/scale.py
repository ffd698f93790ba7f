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

Writes: one JSON line per (size, shape) and per seeding step to --jsonl, a Markdown report to
bench/out/scale/report.md (and stdout). Every process started is stopped on exit.
"""
import argparse
import http.client
import json
import math
import os
import random
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

COLL = "items"
ADMIN_TOKEN = "scale-bench-admin-token-0123456789abcdef"
LNG0, LNG1 = 2.25, 2.42
LAT0, LAT1 = 48.815, 48.902
BOX_FRACTION = 0.03  # of the points inside a $geoWithin box
N_MAX = 3000


def entity(i):
    r = random.Random(i * 7919 + 17)
    return r.randint(0, N_MAX), round(r.uniform(LNG0, LNG1), 6), round(r.uniform(LAT0, LAT1), 6), "item %d" % i


def roost_doc(i):
    n, lng, lat, name = entity(i)
    return {"n": n, "loc": [lng, lat], "name": name}


def pb_doc(i):
    n, lng, lat, name = entity(i)
    return {"n": n, "lng": lng, "lat": lat, "name": name}


def q(obj):
    return urllib.parse.quote(json.dumps(obj, separators=(",", ":")))


def f(expr):
    return urllib.parse.quote(expr)


# ---------------------------------------------------------------- seeding
def post_json(holder, port, path, body, headers, tries=20):
    """POST on a kept-alive connection; reconnects on a reset and waits on 503 (queue full)."""
    data = json.dumps(body)
    for attempt in range(tries):
        c = holder.get("c") or B.conn(port, timeout=120)
        holder["c"] = c
        try:
            c.request("POST", path, data, headers)
            r = c.getresponse()
            payload = r.read()
        except (OSError, http.client.HTTPException):
            c.close()
            holder.pop("c", None)
            time.sleep(0.1 * (attempt + 1))
            continue
        if r.status == 503:
            time.sleep(0.2 * (attempt + 1))
            continue
        if r.status != 200:
            raise RuntimeError("POST %s: HTTP %d %s" % (path, r.status, payload[:300]))
        return json.loads(payload)
    raise RuntimeError("POST %s: gave up after %d tries" % (path, tries))


def seed_roost(port, start, end, ids, threads):
    def send(holder, rng):
        ops = [{"method": "POST", "path": "/" + COLL, "body": roost_doc(i)} for i in rng]
        res = post_json(holder, port, "/_batch", {"operations": ops}, {"Content-Type": "application/json"})
        for i, r in zip(rng, res["results"]):
            if r["status"] != 201:
                raise RuntimeError("roostd batch item %d: %s" % (i, r))
            ids[i] = r["body"]["_id"]
    return B.in_chunks(start, end, 100, threads, send)


def seed_pb(pb, start, end, ids, threads, per):
    url = "/api/collections/%s/records" % COLL
    hdr = {"Content-Type": "application/json", "Authorization": pb.token}

    def send(holder, rng):
        reqs = [{"method": "POST", "url": url, "body": pb_doc(i)} for i in rng]
        res = post_json(holder, pb.port, "/api/batch", {"requests": reqs}, hdr)
        for i, r in zip(rng, res):
            if r.get("status") != 200:
                raise RuntimeError("PocketBase batch item %d: %s" % (i, r))
            ids[i] = r["body"]["id"]
    return B.in_chunks(start, end, per, threads, send)


# ---------------------------------------------------------------- HTTP helpers
def get(port, path, headers=None, timeout=120):
    c = B.conn(port, timeout=timeout)
    t0 = time.monotonic()
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    ms = (time.monotonic() - t0) * 1000
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = body[:300].decode("utf-8", "replace")
    return r.status, data, hdrs, ms


def items_of(api, data):
    if api == "roost":
        return data if isinstance(data, list) else None
    return data.get("items") if isinstance(data, dict) else None


def n_of(api, d):
    return d.get("n")


def lnglat(api, d):
    if api == "roost":
        return d["loc"][0], d["loc"][1]
    return d["lng"], d["lat"]


def haversine_m(lng1, lat1, lng2, lat2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(min(1.0, a)))


# ---------------------------------------------------------------- shapes
RP = "/" + COLL
PP = "/api/collections/%s/records" % COLL
PB_TAIL = "&skipTotal=1"


class Shape:
    def __init__(self, key, label, indexed, expect, roost_paths, pb_paths, check=None, compare=None, note=""):
        self.key, self.label, self.indexed, self.expect = key, label, indexed, expect
        self.roost_paths, self.pb_paths = roost_paths, pb_paths
        self.check = check          # check(api, path_index, items) -> error string or None
        self.compare = compare      # compare(roost_items, pb_items) -> error string or None
        self.note = note


def sorted_by_n(desc=False):
    def check(api, k, items):
        ns = [n_of(api, d) for d in items]
        if ns != sorted(ns, reverse=desc):
            return "not sorted by n%s: %s" % (" desc" if desc else "", ns)
    return check


def same_n(a, b):
    na, nb = [d["n"] for d in a], [d["n"] for d in b]
    if na != nb:
        return "n values differ: roostd %s, PocketBase %s" % (na, nb)


def build_shapes(size, roost_ids, pb_ids, roost_cursors, keyset_page, rng, pb_near_sort):
    shapes = []
    sample = rng.sample(range(size), min(size, 5000))
    shapes.append(Shape("get", "GET by id", True, 1,
                        ["%s/%s" % (RP, roost_ids[i]) for i in sample],
                        ["%s/%s" % (PP, pb_ids[i]) for i in sample]))
    shapes.append(Shape("list", "`?limit=20` (no filter)", True, 20,
                        [RP + "?limit=20"], [PP + "?perPage=20" + PB_TAIL]))
    shapes.append(Shape("sort_asc", '`sort={"n":1}`', True, 20,
                        [RP + "?limit=20&sort=" + q({"n": 1})], [PP + "?perPage=20&sort=n" + PB_TAIL],
                        check=sorted_by_n(), compare=same_n))
    shapes.append(Shape("sort_desc", '`sort={"n":-1}`', True, 20,
                        [RP + "?limit=20&sort=" + q({"n": -1})], [PP + "?perPage=20&sort=-n" + PB_TAIL],
                        check=sorted_by_n(True), compare=same_n))

    def gt_check(api, k, items):
        bad = [d["n"] for d in items if not d["n"] > 1500]
        if bad:
            return "n <= 1500 in a $gt 1500 page: %s" % bad
    shapes.append(Shape("range", '`query={"n":{"$gt":1500}}`', True, 20,
                        [RP + "?limit=20&query=" + q({"n": {"$gt": 1500}})],
                        [PP + "?perPage=20&filter=" + f("n>1500") + PB_TAIL], check=gt_check))

    def gt_sorted(api, k, items):
        return gt_check(api, k, items) or sorted_by_n()(api, k, items)
    shapes.append(Shape("range_sort", '`query={"n":{"$gt":1500}}&sort={"n":1}`', True, 20,
                        [RP + "?limit=20&query=" + q({"n": {"$gt": 1500}}) + "&sort=" + q({"n": 1})],
                        [PP + "?perPage=20&filter=" + f("n>1500") + "&sort=n" + PB_TAIL],
                        check=gt_sorted, compare=same_n))

    # $geoWithin $box holding ~3% of the points (random places, 200 boxes).
    fx, fy = math.sqrt(BOX_FRACTION) * (LNG1 - LNG0), math.sqrt(BOX_FRACTION) * (LAT1 - LAT0)
    boxes = []
    for _ in range(200):
        x0 = round(rng.uniform(LNG0, LNG1 - fx), 5)
        y0 = round(rng.uniform(LAT0, LAT1 - fy), 5)
        boxes.append((x0, y0, round(x0 + fx, 5), round(y0 + fy, 5)))

    def box_check(api, k, items):
        x0, y0, x1, y1 = boxes[k]
        out = [lnglat(api, d) for d in items if not (x0 <= lnglat(api, d)[0] <= x1 and y0 <= lnglat(api, d)[1] <= y1)]
        if out:
            return "points outside box %s: %s" % (boxes[k], out[:3])
    shapes.append(Shape("geo_box", "`$geoWithin $box` (~3% of points)", True, 20,
                        [RP + "?limit=20&query=" + q({"loc": {"$geoWithin": {"$box": [[b[0], b[1]], [b[2], b[3]]]}}})
                         for b in boxes],
                        [PP + "?perPage=20&filter=" + f("lng>=%s && lng<=%s && lat>=%s && lat<=%s" % (b[0], b[2], b[1], b[3]))
                         + PB_TAIL for b in boxes],
                        check=box_check, note="PocketBase: filter on indexed lng/lat number fields"))

    points = [(round(rng.uniform(LNG0, LNG1), 5), round(rng.uniform(LAT0, LAT1), 5)) for _ in range(200)]

    def near_check(api, k, items):
        px, py = points[k]
        ds = [haversine_m(px, py, *lnglat(api, d)) for d in items]
        if any(ds[j] > ds[j + 1] + 0.01 for j in range(len(ds) - 1)):
            return "not nearest-first: %s" % [round(x, 1) for x in ds]

    def near_compare(a, b):
        na, nb = [d["name"] for d in a], [d["name"] for d in b]
        if set(na[:19]) - set(nb):  # the 20th may tie within rounding
            return "different nearest sets: roostd %s, PocketBase %s" % (na, nb)
    pb_near = None
    if pb_near_sort:
        pb_near = [PP + "?perPage=20&sort=" + f("geoDistance(lng,lat,%s,%s)" % p) + PB_TAIL for p in points]
    shapes.append(Shape("near", "`$nearSphere` (no `$maxDistance`)", True, 20,
                        [RP + "?limit=20&query=" + q({"loc": {"$nearSphere": {"$geometry": {"type": "Point", "coordinates": list(p)}}}})
                         for p in points],
                        pb_near, check=near_check, compare=near_compare,
                        note="PocketBase: sort=geoDistance(lng,lat,x,y), a full scan (no spatial index)"))

    skip = min(30000, (size - 1000) // 20 * 20)
    shapes.append(Shape("skip", "`?skip=30000&limit=20` (skip = size − 1000 below 31k rows)", False, 20,
                        [RP + "?limit=20&skip=%d" % skip], [PP + "?perPage=20&page=%d" % (skip // 20 + 1) + PB_TAIL],
                        note="offset paging is O(skip) by design; no O(page) target"))

    for key, sort, pbsort in (("keyset", None, ""), ("keyset_sort", {"n": 1}, "&sort=n")):
        cur = roost_cursors.get(key)
        if not cur:
            continue
        rpaths = [RP + "?limit=20" + ("&sort=" + q(sort) if sort else "") + "&after=" + urllib.parse.quote(c) for c in cur]
        ppaths = [PP + "?perPage=20&page=%d" % (keyset_page + j) + pbsort + PB_TAIL for j in range(len(cur))]
        label = "keyset page 1000%s (`after=`; PocketBase `page=`; page size/20 − 60 below 21.2k rows)" % (
            ', `sort={"n":1}`' if sort else "")
        shapes.append(Shape(key, label, True, 20, rpaths, ppaths,
                            check=sorted_by_n() if sort else None, compare=same_n if sort else None))

    lows = [rng.randint(0, N_MAX - 100) for _ in range(200)]

    def page_check(api, k, items):
        bad = [d["n"] for d in items if not lows[k] <= d["n"] < lows[k] + 100]
        if bad:
            return "n outside [%d, %d): %s" % (lows[k], lows[k] + 100, bad)
    shapes.append(Shape("page50", "plain page: `n` in [a, a+100), 50 per page, no total", True, 50,
                        [RP + "?limit=50&query=" + q({"n": {"$gte": a, "$lt": a + 100}}) for a in lows],
                        [PP + "?perPage=50&filter=" + f("n>=%d && n<%d" % (a, a + 100)) + PB_TAIL for a in lows],
                        check=page_check))
    return shapes


def walk_cursors(port, sort, page, count):
    """Follows X-Roost-Next from page 1; returns the cursors that start pages page..page+count-1,
    and the page-`page` items (to compare with the skip page)."""
    path = RP + "?limit=20" + ("&sort=" + q(sort) if sort else "")
    after, cursors, first_items = None, [], None
    c = B.conn(port)
    t0 = time.monotonic()
    for p in range(1, page + count):
        c.request("GET", path + ("&after=" + urllib.parse.quote(after) if after else ""))
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit("keyset walk: page %d HTTP %d %s" % (p, r.status, body[:200]))
        if p >= page:
            if after is None:
                raise SystemExit("keyset walk: page %d has no cursor" % p)
            cursors.append(after)
            if p == page:
                first_items = json.loads(body)
        after = r.getheader("X-Roost-Next")
        if after is None and p < page + count - 1:
            raise SystemExit("keyset walk: no X-Roost-Next after page %d" % p)
    c.close()
    return cursors, first_items, time.monotonic() - t0


# ---------------------------------------------------------------- kept data (--reuse)
def start_roostd_keep(binary, port, workdir):
    """roostd on the data and config a previous run left in workdir (benchlib's start wipes them)."""
    data = os.path.join(workdir, "roost-data")
    cfg = os.path.join(workdir, "roost.yaml")
    p = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--data-dir", data, "--config", cfg],
                os.path.join(workdir, "roostd-%d.log" % port))
    B.wait_http(port, "/healthz", p, "roostd", limit=300)
    return p


class PBKeep(B.PB):
    """PocketBase on the pb_data a previous run left in workdir (benchlib's PB wipes it)."""
    def __init__(self, port, workdir):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        data = os.path.join(workdir, "pb_data")
        self.proc = B.spawn([B.pb_binary(), "serve", "--http", "127.0.0.1:%d" % port, "--dir", data],
                            os.path.join(workdir, "pocketbase.log"), cwd=workdir)
        B.wait_http(port, "/api/health", self.proc, "PocketBase", limit=120)
        self.token = ""
        self.token = self.api("POST", "/api/collections/_superusers/auth-with-password",
                              {"identity": B.PB_EMAIL, "password": B.PB_PASSWORD})["token"]


def rebuild_ids(port, pb, workdir):
    """Writes roost-ids.txt and pb-ids.txt (line i: the id of document "item i") by walking both
    collections, for kept data from a run that did not write them."""
    by = {}
    after = None
    c = B.conn(port)
    while True:
        c.request("GET", RP + "?limit=1000&fields=name" + ("&after=" + urllib.parse.quote(after) if after else ""))
        r = c.getresponse()
        page = json.loads(r.read())
        for d in page:
            by[int(d["name"].split()[1])] = d["_id"]
        after = r.getheader("X-Roost-Next")
        if not after or not page:
            break
    ids = [by[i] for i in range(len(by))]
    with open(os.path.join(workdir, "roost-ids.txt"), "w") as fh:
        fh.write("\n".join(ids) + "\n")
    if pb:
        by, last = {}, ""
        while True:
            st, data, _, _ = get(pb.port, PP + "?perPage=1000&skipTotal=1&fields=id,name&sort=id&filter=" + f('id>"%s"' % last))
            items = data["items"]
            for d in items:
                by[int(d["name"].split()[1])] = d["id"]
            if len(items) < 1000:
                break
            last = items[-1]["id"]
        with open(os.path.join(workdir, "pb-ids.txt"), "w") as fh:
            fh.write("\n".join(by[i] for i in range(len(by))) + "\n")
    B.log("rebuilt the id files from the kept data: %d documents" % len(ids))


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
    ap.add_argument("--seed-threads", type=int, default=4, help="roostd seeding client threads")
    ap.add_argument("--pb-seed-threads", type=int, default=2)
    ap.add_argument("--pb-batch", type=int, default=1000, help="creates per PocketBase /api/batch (its maxRequests is set to 1000)")
    ap.add_argument("--jsonl", default=os.path.join(B.HERE, "results", "scale.jsonl"))
    ap.add_argument("--workdir", default=os.path.join(B.OUT, "scale"))
    ap.add_argument("--reuse", action="store_true",
                    help="start both servers on the data a previous run left in --workdir (and its id files) and "
                         "grow it from there; e.g. `--sizes 1000000 --reuse --shapes geo_box,near` re-measures 1M without re-seeding")
    a = ap.parse_args()
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
            "nproc": os.cpu_count()}
    jl = open(a.jsonl, "a")

    def emit(rec):
        rec = dict(base, **rec)
        jl.write(json.dumps(rec) + "\n")
        jl.flush()

    B.log("run %s, roostd %s (%s), sizes %s, load average %s" % (run_id, binary, rev, sizes, B.loadavg()))
    reuse = a.reuse and os.path.exists(os.path.join(a.workdir, "roost-data"))
    if reuse:
        roost = start_roostd_keep(binary, a.port, a.workdir)
    else:
        roost = B.start_roostd(binary, a.port, a.workdir, {COLL: ["n", '"loc:geo"']},
                               extra_yaml="admin_token: %s\n" % ADMIN_TOKEN)
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
    report(a, run_id, rev, pb_version, sizes, seeds, results)


def report(a, run_id, rev, pb_version, sizes, seeds, results):
    by = {}
    order = []
    for size, sh, r, p, probs, plan in results:
        if sh.key not in by:
            by[sh.key] = {"sh": sh}
            order.append(sh.key)
        by[sh.key][size] = (r, p, probs)
    lo, hi = sizes[0], sizes[-1]
    out = []
    out.append("run `%s`, roostd %s, %s, wrk -t%d -c%d -d%s, %d round(s) (best kept), load average at the end %s" % (
        run_id, rev, pb_version or "no PocketBase", a.threads, a.conns, a.duration, a.rounds, B.loadavg()))
    out.append("")
    hdr = "| query (limit 20) |" + "".join(" roostd %s | PB %s | × |" % (k(s), k(s)) for s in sizes) + \
          " cost %s/%s | targets |" % (k(hi), k(lo))
    out.append(hdr)
    out.append("|" + "---|" * (2 + 3 * len(sizes) + 1))
    for key in order:
        row = by[key]
        sh = row["sh"]
        cells = []
        ok3, any_pb = True, False
        for s in sizes:
            if s not in row:
                cells += ["", "", ""]
                continue
            r, p, probs = row[s]
            ratio = r["rps"] / p["rps"] if p and p["rps"] else None
            if ratio is not None:
                any_pb = True
                if ratio < 3:
                    ok3 = False
            cells += ["%.0f%s" % (r["rps"], " ⚠" if probs else ""), "%.0f" % p["rps"] if p else "–",
                      "%.1f" % ratio if ratio else "–"]
        cost = None
        if lo in row and hi in row and row[hi][0]["rps"]:
            cost = row[lo][0]["rps"] / row[hi][0]["rps"]
        tg = []
        if sh.indexed and cost is not None and lo != hi:
            tg.append("2× cost: %s" % ("met" if cost <= 2 else "**missed**"))
        tg.append("3× PB: %s" % (("met" if ok3 else "**missed**") if any_pb else "n/a (no PocketBase equivalent)"))
        if sh.key == "page50":
            r5 = all(row[s][1] and row[s][0]["rps"] / row[s][1]["rps"] >= 5 for s in sizes if s in row)
            tg.append("5× PB: %s" % ("met" if r5 else "**missed**"))
        out.append("| %s | %s | %s | %s |" % (sh.label, " | ".join(cells), "%.2f" % cost if cost else "–", "; ".join(tg)))
    out.append("")
    for who, s0, s1, secs in seeds:
        out.append("- seeding %s %d → %d: %.1f s, %.0f documents/s" % (who, s0, s1, secs, (s1 - s0) / secs))
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.workdir, "report.md"), "w") as fh:
        fh.write(text)
    print(text)


def k(n):
    return "%dk" % (n // 1000) if n < 1000000 else "%gM" % (n / 1e6)


if __name__ == "__main__":
    main()
