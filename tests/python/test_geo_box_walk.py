"""`$geoWithin $box` lists in row order on a collection larger than the box
walk's budget (PostgreSQL walks the primary key testing each row for at
most 2,000 rows at a page of 20, then gathers through the geo index;
docs/POSTGRES-LISTS.md): dense, sparse and empty boxes, boxes whose edges
hold points, page sizes, keyset and skip pages, a private collection's
users, all against the reference (the box's points in insertion order,
edges inclusive). Both engines."""
import json
import random

import pytest

from roost_harness import ADMIN_TOKEN, json_query as q, running_roostd

CONFIG = f"""
default_permission: public
admin_token: {ADMIN_TOKEN}
collections:
  spots:
    indexes: ["loc:geo"]
  mine:
    permission: private
    indexes: ["loc:geo"]
"""
DOCS = 4500

BOXES = [
    [[2.0, 48.0], [3.0, 49.0]],          # every point
    [[2.0, 48.0], [2.5, 48.5]],          # about a quarter
    [[2.1, 48.1], [2.16, 48.16]],        # about 0.4%: sparser than the budget's 1%
    [[2.9, 48.9], [2.905, 48.905]],      # a handful or none
    [[2.25, 48.25], [2.5, 48.5]],        # edges on the grid points below
    [[5.0, 5.0], [6.0, 6.0]],            # nothing
]


@pytest.fixture(scope="module")
def world():
    rng = random.Random(4242)
    with running_roostd(CONFIG) as d:
        docs = []
        for start in range(0, DOCS, 100):
            ops = []
            for i in range(start, min(DOCS, start + 100)):
                # Some points exactly on a 0.25-degree grid, so box edges meet them.
                loc = [2 + rng.randint(0, 4) / 4, 48 + rng.randint(0, 4) / 4] if i % 7 == 0 else [rng.uniform(2, 3), rng.uniform(48, 49)]
                ops.append({"method": "POST", "path": "/spots", "body": {"i": i, "loc": loc}})
            r = d.call("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
            docs += [res["body"] for res in r.body["results"]]
        yield d, docs


def inside(box, loc):
    (x0, y0), (x1, y1) = box
    return x0 <= loc[0] <= x1 and y0 <= loc[1] <= y1


def ids(d, path, token=ADMIN_TOKEN):
    r = d.call("GET", path, token=token)
    assert r.status == 200, (path, r)
    return [x["_id"] for x in r.body], r.header("X-Roost-Next")


@pytest.mark.parametrize("box", BOXES, ids=lambda b: json.dumps(b, separators=(",", ":")))
@pytest.mark.parametrize("page", [1, 20, 150])
def test_box_pages_are_the_reference(world, box, page):
    d, docs = world
    expected = [x["_id"] for x in docs if inside(box, x["loc"])]
    flt = q({"loc": {"$geoWithin": {"$box": box}}})
    first, _ = ids(d, f"/spots?limit={page}&query={flt}")
    assert first == expected[:page]
    seen, after = [], None
    for _ in range(12):
        got, after = ids(d, f"/spots?limit={page}&query={flt}" + (f"&after={after}" if after else ""))
        seen += got
        if not after:
            break
    assert seen == (expected if after is None else expected[:len(seen)])
    for skip in (page, 25, len(expected) // 2, max(0, len(expected) - 1), len(expected) + 5):
        got, _ = ids(d, f"/spots?limit={page}&skip={skip}&query={flt}")
        assert got == expected[skip:skip + page], skip
    r = d.call("GET", f"/spots?limit={page}&count=true&query={flt}", token=ADMIN_TOKEN)
    assert r.status == 200 and [x["_id"] for x in r.body] == expected[:page]
    assert int(r.header("X-Total-Count") or -1) == len(expected), r


def test_a_private_collections_box_counts_only_the_callers_rows(world):
    """Visibility first: the user's page and skip are among their own rows only."""
    d, _ = world
    users = [d.new_user(name)[1] for name in ("ann", "bob")]
    rng = random.Random(7)
    own = {0: [], 1: []}
    for start in range(0, 2400, 100):
        who = (start // 100) % 2
        ops = [{"method": "POST", "path": "/mine", "body": {"loc": [rng.uniform(2, 3), rng.uniform(48, 49)]}} for _ in range(100)]
        r = d.call("POST", "/_batch", {"operations": ops}, token=users[who])
        assert r.status == 200, r
        own[who] += [res["body"] for res in r.body["results"]]
    box = [[2.0, 48.0], [2.3, 48.3]]
    flt = q({"loc": {"$geoWithin": {"$box": box}}})
    for who in (0, 1):
        expected = [x["_id"] for x in own[who] if inside(box, x["loc"])]
        for skip in (0, 7, len(expected) - 3):
            got, _ = ids(d, f"/mine?limit=20&skip={skip}&query={flt}", token=users[who])
            assert got == expected[skip:skip + 20]


def plan_nodes(node):
    """The plan's nodes that produce rows (not InitPlans or SubPlans)."""
    out = [node]
    for child in node.get("Plans", []):
        if child.get("Parent Relationship") not in ("InitPlan", "SubPlan"):
            out += plan_nodes(child)
    return out


def box_plan(d, flt, extra=""):
    r = d.call("GET", f"/spots?explain=true&limit=20&query={q(flt)}{extra}", token=ADMIN_TOKEN)
    assert r.status == 200, r
    return r.body


def assert_walks_points(body):
    """A Limit over the walk of the points table's primary key (an index-only scan in row order),
    each row fetched by its id: no Sort, no Seq Scan, no scan of the collection's own primary key
    for its rows."""
    assert body["strategy"] == "geo-walk", body
    tree = body["statements"][-1]["tree"][0]["Plan"]
    if tree["Node Type"] == "Subquery Scan":  # a skip page's deferred join: the walk is its inner statement
        tree = plan_nodes(tree)[1]
    assert tree["Node Type"] == "Limit", tree
    nodes = plan_nodes(tree)
    walks = [n for n in nodes if n["Node Type"] == "Index Only Scan" and n["Index Name"].endswith("_p_pkey")]
    assert len(walks) == 1, tree
    assert not any(n["Node Type"] in ("Sort", "Incremental Sort", "Seq Scan", "Bitmap Heap Scan", "Hash Join", "Merge Join")
                   for n in nodes), tree
    fetches = [n for n in nodes if n["Node Type"] in ("Index Scan", "Index Only Scan") and n["Index Name"].endswith("_pkey")
               and not n["Index Name"].endswith("_p_pkey")]
    assert fetches and all("(rid = " in n.get("Index Cond", "") for n in fetches), tree
    return walks[0]


def test_postgres_walks_the_points_table_for_a_box(world):
    """The bounded walk's plan: a Limit over the points table's primary key, an index-only scan,
    no Sort of the box's points; keyset pages start the walk at the cursor, skip pages and other
    conditions keep it; a box that not every match must meet, or a sorted list, does not walk."""
    from roost_harness import engine
    if engine.name() != "postgresql":
        pytest.skip("PostgreSQL's plans")
    d, _ = world
    box = {"loc": {"$geoWithin": {"$box": BOXES[1]}}}
    assert_walks_points(box_plan(d, box))
    _, after = ids(d, f"/spots?limit=20&query={q(box)}")
    assert after
    scan = assert_walks_points(box_plan(d, box, f"&after={after}"))
    assert "(rid > " in scan.get("Index Cond", ""), scan
    assert_walks_points(box_plan(d, box, "&skip=40"))
    assert_walks_points(box_plan(d, {"$and": [box, {"i": {"$gt": 100}}]}))
    assert box_plan(d, {"$or": [box, {"i": 3}]})["strategy"] != "geo-walk"
    assert box_plan(d, box, "&sort=" + q({"i": 1}))["strategy"] != "geo-walk"
    # A sparse box's page is not filled within the walk's budget: the list gathers through the GiST index.
    sparse = {"loc": {"$geoWithin": {"$box": BOXES[3]}}}
    assert_walks_points(box_plan(d, sparse))


# Values besides [lng, lat] numbers: booleans (1 and 0 to SQLite's geo SQL),
# strings, nulls, containers, short arrays, GeoJSON points, coordinates just
# outside a box's edge, and no point at all. A geo-indexed field refuses most
# of them on write (in this build it stores GeoJSON points and null besides
# points); the stored ones meet the box walk's sieve and exact test.
ODD_POINTS = [
    [True, False], [1, False], [True, 0.5], ["1", "0"], [None, 0], [1], [], [[1, 0], [1, 0]],
    [{"x": 1}, 0], {"type": "Point", "coordinates": [1, 0]}, {"type": "Point", "coordinates": [True, 0.25]},
    {"type": "Point", "coordinates": ["1", 0]}, {"coordinates": {"0": 1, "1": 0}}, "1,0", 1, True, None,
    [1.0000000001, 0], [0.9999999999, -0.5000000001], [1e300, 0], [-1e300, 0],
]
ODD_BOXES = [[[0.5, -0.5], [1.5, 0.5]], [[1, 0], [1, 0]], [[0, 0], [2, 1]], [[-1, -1], [0.5, 0.1]]]


def reference_point(loc):
    """SQLite's reading: an array's first two elements, else a GeoJSON `coordinates`; a number, or a boolean as 1 or 0."""
    coords = loc if isinstance(loc, list) else loc.get("coordinates") if isinstance(loc, dict) else None
    if not isinstance(coords, list) or len(coords) < 2:
        return None
    xy = [float(c) if isinstance(c, (int, float)) else None for c in coords[:2]]
    return None if None in xy else xy


@pytest.fixture(scope="module")
def odd_world():
    rng = random.Random(99)
    with running_roostd(CONFIG) as d:
        # A geo-indexed field refuses what is not a point on write (400); the rest are stored.
        stored = []
        for loc in ODD_POINTS:
            r = d.call("POST", "/spots", {"i": -1, "loc": loc})
            assert r.status in (200, 201, 400), (loc, r)
            if r.status != 400:
                stored.append(loc)
                assert d.call("DELETE", f"/spots/{r.body['_id']}").status in (200, 204)
        assert len(stored) >= 4, stored
        docs = []
        for start in range(0, 3000, 100):
            ops = []
            for i in range(start, start + 100):
                body = {"i": i, "loc": stored[(i // 5) % len(stored)] if i % 5 == 0 else [rng.uniform(0, 2), rng.uniform(-1, 1)]}
                if i % 97 == 0:
                    del body["loc"]
                ops.append({"method": "POST", "path": "/spots", "body": body})
            r = d.call("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
            docs += [res["body"] for res in r.body["results"]]
        yield d, docs


@pytest.mark.parametrize("box", ODD_BOXES, ids=lambda b: json.dumps(b, separators=(",", ":")))
def test_box_pages_over_odd_values_are_the_reference(odd_world, box):
    """A non-point never matches; booleans count as 1 and 0; GeoJSON points match as arrays do."""
    d, docs = odd_world
    points = [(x["_id"], reference_point(x["loc"]) if "loc" in x else None) for x in docs]
    expected = [i for i, p in points if p is not None and inside(box, p)]
    assert expected, box
    flt = q({"loc": {"$geoWithin": {"$box": box}}})
    for page in (1, 20, 100):
        got, _ = ids(d, f"/spots?limit={page}&query={flt}")
        assert got == expected[:page], page
        for skip in (page, len(expected) // 2):
            got, _ = ids(d, f"/spots?limit={page}&skip={skip}&query={flt}")
            assert got == expected[skip:skip + page], (page, skip)
