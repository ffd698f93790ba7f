"""bench/scale.py's query shapes: each shape's roostd and PocketBase request and
the check its answers must pass before it is measured."""

import json
import math
import time
import urllib.parse

import benchlib as B
from scale_data import (
    BOX_FRACTION,
    LAT0,
    LAT1,
    LNG0,
    LNG1,
    N_MAX,
    PB_TAIL,
    PP,
    RP,
    f,
    haversine_m,
    lnglat,
    n_of,
    q,
)


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
