"""Query plans that read only the page (issue #22): sorts and ranges walk an
index, `after=` pages by keys. Whatever the plan, the answer must be exactly
the one the old full scan gave: every list here is checked against a Python
reference of Roost's documented order (MongoDB's order across types, then
insertion order in the direction of the first sort key), for random sorts,
ranges, page sizes and keyset/skip paging."""

import json
import random

import pytest

from roost_harness import ADMIN_TOKEN, assert_error, engine
from query_plans_support import SEED, get_ids, matches, q, reference_order, world


SORTS = [None, [("n", 1)], [("n", -1)], [("m", 1)], [("m", -1)], [("_id", 1)], [("_id", -1)],
         [("_createdAt", -1)], [("s", 1)], [("n", 1), ("s", -1)], [("g", 1), ("n", -1)], [("s", -1), ("n", 1)]]
FILTERS = [None, {"n": {"$gt": 3}}, {"n": {"$gte": -5, "$lt": 7.5}}, {"n": {"$lte": "b"}}, {"m": {"$gt": 10}},
           {"s": {"$lt": 20}}, {"g": "c"}, {"g": "c", "n": {"$gt": 0}}]


def cases():
    rng = random.Random(SEED + 1)
    out = []
    for sort in SORTS:
        for flt in FILTERS:
            out.append((sort, flt, rng.choice([1, 7, 50, 333])))
    return out


@pytest.mark.parametrize("sort,flt,page", cases(), ids=lambda v: json.dumps(v, separators=(",", ":")) if not isinstance(v, int) else f"page{v}")
def test_every_plan_answers_what_the_reference_orders(world, sort, flt, page):
    d, docs = world
    expected = reference_order([x for x in docs if matches(x, flt or {})], sort)
    # The default order of an unsorted range on the only indexed field is that field's order.
    if sort is None and flt is not None and list(flt) in (["n"],) and isinstance(flt["n"], dict):
        expected = reference_order([x for x in docs if matches(x, flt)], [("n", 1)])
    params = (f"&sort={q(dict(sort))}" if sort else "") + (f"&query={q(flt)}" if flt else "")
    whole, _ = get_ids(d, f"/items?limit=1000{params}")
    assert whole == expected[:1000]

    # Keyset pages: the concatenation is the whole list, with no repeat.
    seen, after, pages = [], None, 0
    while pages < len(expected) // page + 2:
        ids, after = get_ids(d, f"/items?limit={page}{params}" + (f"&after={after}" if after else ""))
        seen += ids
        pages += 1
        if after is None:
            break
        assert len(ids) == page
    assert seen == expected

    # skip pages agree with the same order.
    for skip in (0, page, len(expected) // 2):
        ids, _ = get_ids(d, f"/items?limit={page}&skip={skip}{params}")
        assert ids == expected[skip:skip + page]


# (sort, filter, SQLite's strategy, PostgreSQL's: the planner's choice, read from its plan).
@pytest.mark.parametrize("sort,flt,strategy,pg_strategy", [
    ([("n", 1)], None, "index-walk", "index-walk"),
    ([("n", -1)], {"n": {"$gt": 3}}, "index-walk", "index-walk"),
    (None, {"n": {"$gt": 3}}, "index-walk", "index-walk"),
    ([("_createdAt", -1)], None, "index-walk", "scan"),   # no index on _createdAt on PostgreSQL
    ([("s", 1)], None, "scan", "scan"),
    ([("n", 1)], {"g": "c"}, "scan", None),       # few matches: gathered through g's index, then sorted
    (None, {"g": "c"}, "index-lookup", "index-lookup"),
    (None, {"m": {"$gt": 10}}, "scan", "scan"),  # m holds arrays: no walk, rows in row order
    (None, {"loc": {"$nearSphere": [0, 45]}}, "nearest-widening", "nearest-knn"),
    (None, {"loc": {"$nearSphere": [0, 45], "$maxDistance": 5000}}, "nearest-widening", "nearest-knn"),
])
def test_explain_names_the_plan_for_admins_only(world, sort, flt, strategy, pg_strategy):
    d, _ = world
    postgres = engine.name() == "postgresql"
    params = (f"&sort={q(dict(sort))}" if sort else "") + (f"&query={q(flt)}" if flt else "")
    r = d.call("GET", f"/items?explain=true&limit=20{params}", token=ADMIN_TOKEN)
    assert r.status == 200, r
    if postgres:
        if pg_strategy is None:
            assert r.body["strategy"] in ("index-walk", "index-lookup"), r.body
        strategy = pg_strategy or r.body["strategy"]
    assert r.body["strategy"] == strategy, r.body
    assert all(s["plan"] for s in r.body["statements"])
    lines = [line for s in r.body["statements"] for line in s["plan"]]
    if strategy == "index-walk" and postgres:
        # The page's rows come from an index scan under the Limit, and nothing is sorted.
        assert any("Index Scan" in line for line in lines), r.body
        assert not any(line.strip().lstrip("->").strip().startswith(("Sort", "Incremental Sort")) for line in lines), r.body
    elif strategy == "index-walk":
        assert any("USING INDEX" in line for line in lines), r.body
        assert not any("TEMP B-TREE" in line for line in lines), r.body
    assert_error(d.call("GET", f"/items?explain=true{params}"), 403, "Forbidden")


def test_a_skip_page_in_row_order_counts_off_the_row_id_index(world):
    # Every row in the default order, far in: SQLite steps over the row-id index's
    # small entries, not the documents, then reads the page's rows by id. A filter
    # or a sort keeps the plans above.
    d, docs = world
    skip = len(docs) // 2
    r = d.call("GET", f"/items?explain=true&limit=20&skip={skip}", token=ADMIN_TOKEN)
    assert r.status == 200, r
    if engine.name() == "sqlite":
        assert r.body["strategy"] == "row-index-page", r.body
        lines = [line for s in r.body["statements"] for line in s["plan"]]
        assert any("COVERING INDEX" in line and line.rstrip().endswith("_rid") for line in lines), r.body
        assert any("INTEGER PRIMARY KEY" in line for line in lines), r.body
    for extra in (f"&query={q({'g': 'c'})}", f"&sort={q({'s': 1})}", ""):
        plain = d.call("GET", f"/items?explain=true&limit=20{extra}", token=ADMIN_TOKEN)
        assert plain.body["strategy"] != "row-index-page", plain.body
    ids, _ = get_ids(d, f"/items?limit=20&skip={skip}")
    assert ids == reference_order(docs, None)[skip:skip + 20]


def test_a_private_sorted_page_holds_only_the_callers_rows_in_order(world):
    # (That such a read never walks a value index is checked in Swift, ListPlanTests.)
    d, _ = world
    tokens = {}
    for name in ("plans-a", "plans-b"):
        d.sign_up(name)
        tokens[name] = d.log_in(name, "correct horse battery").body["token"]
    for i in range(40):
        owner = "plans-a" if i % 2 else "plans-b"
        assert d.call("POST", "/notes", {"n": i % 9, "k": i}, token=tokens[owner]).status == 201
    r = d.call("GET", f"/notes?sort={q({'n': -1})}&limit=100", token=tokens["plans-a"])
    mine = [x for x in r.body]
    assert [x["k"] % 2 for x in mine] == [1] * 20
    assert [x["n"] for x in mine] == sorted((x["n"] for x in mine), reverse=True)
    paged, after = [], None
    while True:
        ids, after = get_ids(d, f"/notes?sort={q({'n': -1})}&limit=6" + (f"&after={after}" if after else ""), token=tokens["plans-a"])
        paged += ids
        if not after:
            break
    assert paged == [x["_id"] for x in mine]


@pytest.mark.parametrize("extra,why", [
    ("&after=nonsense", "InvalidQuery"),
    ("&after=" + "A" * 9000, "InvalidQuery"),
    ("&skip=3&after=abc", "InvalidQuery"),
])
def test_a_bad_cursor_is_a_clear_400(world, extra, why):
    d, _ = world
    assert_error(d.call("GET", f"/items?sort={q({'n': 1})}{extra}"), 400, why)


def test_a_cursor_of_another_order_is_refused(world):
    d, _ = world
    _, after = get_ids(d, f"/items?limit=5&sort={q({'n': 1})}")
    assert after
    assert_error(d.call("GET", f"/items?limit=5&sort={q({'n': -1})}&after={after}"), 400, "InvalidQuery")
    ids, _ = get_ids(d, f"/items?limit=5&sort={q({'n': 1})}&after={after}")
    assert len(ids) == 5


def metres(a, b):
    """Great-circle distance as Roost computes it (MongoDB's earth radius)."""
    import math
    (x1, y1), (x2, y2) = a, b
    h = math.sin(math.radians(y2 - y1) / 2) ** 2 + math.cos(math.radians(y1)) * math.cos(math.radians(y2)) * math.sin(math.radians(x2 - x1) / 2) ** 2
    return 2 * math.asin(min(1, math.sqrt(h))) * 6378100.0


GEO_CASES = [
    ({"loc": {"$nearSphere": [0.5, 45.2]}}, None),
    ({"loc": {"$nearSphere": [9.9, 49.9]}}, None),
    ({"loc": {"$nearSphere": [170, -80]}}, None),                     # far from every point: the widest step
    ({"loc": {"$nearSphere": [0, 45], "$maxDistance": 150000}}, 150000),
    ({"loc": {"$nearSphere": [0, 45]}, "g": "b"}, None),
    ({"loc": {"$geoWithin": {"$box": [[-10, 40], [10, 50]]}}}, None),  # a box that holds every point
    ({"loc": {"$geoWithin": {"$box": [[-1, 44], [1, 46]]}}}, None),
]


@pytest.mark.parametrize("flt,max_metres", GEO_CASES, ids=lambda v: json.dumps(v, separators=(",", ":")))
@pytest.mark.parametrize("page", [3, 400])
def test_geo_pages_match_the_reference(world, flt, max_metres, page):
    d, docs = world
    cond = flt["loc"]
    with_loc = [(i, x) for i, x in enumerate(docs) if "loc" in x and all(x.get(k) == v for k, v in flt.items() if k != "loc")]
    if "$nearSphere" in cond:
        centre = cond["$nearSphere"]
        ranked = sorted(((metres(centre, x["loc"]), i, x) for i, x in with_loc), key=lambda t: (t[0], t[1]))
        expected = [x["_id"] for m, _, x in ranked if max_metres is None or m <= max_metres]
    else:
        (x0, y0), (x1, y1) = cond["$geoWithin"]["$box"]
        expected = [x["_id"] for _, x in with_loc if x0 <= x["loc"][0] <= x1 and y0 <= x["loc"][1] <= y1]
    whole, _ = get_ids(d, f"/items?limit=1000&query={q(flt)}")
    assert whole == expected[:1000]
    seen, after = [], None
    for _ in range(40):  # the first 40 pages, or all of them
        ids, after = get_ids(d, f"/items?limit={page}&query={q(flt)}" + (f"&after={after}" if after else ""))
        seen += ids
        if not after:
            break
    assert seen == (expected if after is None else expected[:len(seen)])
    for skip in (page, len(expected) // 3):
        ids, _ = get_ids(d, f"/items?limit={page}&skip={skip}&query={q(flt)}")
        assert ids == expected[skip:skip + page]


@pytest.mark.parametrize("extra", ["", f"&sort={q({'n': 1})}", f"&query={q({'loc': {'$geoWithin': {'$box': [[-10, 40], [10, 50]]}}})}"])
def test_the_largest_skip_is_an_empty_page_not_a_crash(world, extra):
    d, _ = world
    r = d.call("GET", f"/items?skip=9223372036854775807&limit=20{extra}")
    assert r.status == 200 and r.body == [], r
    assert d.call("GET", "/items?limit=1").status == 200
