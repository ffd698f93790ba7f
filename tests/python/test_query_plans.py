"""Query plans that read only the page (issue #22): sorts and ranges walk an
index, `after=` pages by keys. Whatever the plan, the answer must be exactly
the one the old full scan gave: every list here is checked against a Python
reference of Roost's documented order (MongoDB's order across types, then
insertion order in the direction of the first sort key), for random sorts,
ranges, page sizes and keyset/skip paging."""

import json
import random
import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, running_roostd

CONFIG = f"""
default_permission: public
admin_token: {ADMIN_TOKEN}
{FAST_HASHING}
collections:
  items:
    indexes: [n, m, g, "loc:geo"]
  notes:
    permission: private
    indexes: [n]
"""

DOCS = 1200
SEED = 2211


def q(value):
    return urllib.parse.quote(json.dumps(value, separators=(",", ":")))


def random_value(rng, arrays):
    """Every type the order knows, with many ties."""
    kind = rng.choice(["int", "int", "int", "float", "str", "str", "null", "missing", "bool", "obj"] + (["arr"] * 2 if arrays else []))
    return {
        "int": lambda: rng.randint(-20, 20),
        "float": lambda: rng.randint(-400, 400) / 8,
        "str": lambda: rng.choice(["", "a", "ab", "b", "B", "zz", "é", "10"]),
        "null": lambda: None,
        "missing": lambda: KeyError,
        "bool": lambda: rng.random() < 0.5,
        "obj": lambda: {"a": rng.randint(0, 3)},
        "arr": lambda: [rng.randint(-20, 20) for _ in range(rng.randint(0, 3))],
    }[kind]()


def bracket_and_value(doc, field):
    """Roost's sort key of one field: type bracket, then the value in it."""
    if field not in doc or doc[field] is None:
        return (1, 0)
    v = doc[field]
    if isinstance(v, bool):
        return (6, int(v))
    if isinstance(v, (int, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, v.encode())
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return (4 if isinstance(v, dict) else 5, text.encode())


def reference_order(docs, sort):
    """`docs` (in insertion order) sorted as Roost documents it."""
    indexed = list(enumerate(docs))
    keys = sort or []
    rid_ascending = keys[0][1] == 1 if keys else True
    # Stable sorts from the last key to the first.
    indexed.sort(key=lambda p: p[0], reverse=not rid_ascending)
    for field, direction in reversed(keys):
        if field in ("_id", "_createdAt", "_updatedAt"):
            indexed.sort(key=lambda p: p[1][field], reverse=direction == -1)
        else:
            indexed.sort(key=lambda p: bracket_and_value(p[1], field), reverse=direction == -1)
    return [d["_id"] for _, d in indexed]


def value_matches(v, op, bound):
    """MongoDB's comparison: only values of the bound's type bracket compare."""
    if isinstance(bound, (int, float)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return False
        a, b = v, bound
    else:
        if not isinstance(v, str):
            return False
        a, b = v.encode(), bound.encode()
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(doc, flt):
    for field, cond in flt.items():
        v = doc.get(field)
        candidates = [v] + (v if isinstance(v, list) else [])
        if isinstance(cond, dict):
            if not all(any(value_matches(c, op, bound) for c in candidates) for op, bound in cond.items()):
                return False
        elif cond not in candidates:
            return False
    return True


@pytest.fixture(scope="module")
def world():
    rng = random.Random(SEED)
    with running_roostd(CONFIG) as d:
        docs = []
        for start in range(0, DOCS, 100):
            ops = []
            for i in range(start, min(DOCS, start + 100)):
                doc = {"i": i, "g": rng.choice("abcde"), "s": rng.randint(0, 50)}
                if rng.random() < 0.9:
                    doc["loc"] = [rng.uniform(-10, 10), rng.uniform(40, 50)]
                for field, arrays in (("n", False), ("m", True)):
                    v = random_value(rng, arrays)
                    if v is not KeyError:
                        doc[field] = v
                ops.append({"method": "POST", "path": "/items", "body": doc})
            r = d.call("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
            docs += [json.loads(res["body"]) if isinstance(res["body"], str) else res["body"] for res in r.body["results"]]
        assert len(docs) == DOCS and all("_id" in x for x in docs)
        yield d, docs


def get_ids(d, path, token=None):
    r = d.call("GET", path, token=token)
    assert r.status == 200, (path, r)
    return [x["_id"] for x in r.body], r.header("X-Roost-Next")


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


@pytest.mark.parametrize("sort,flt,strategy", [
    ([("n", 1)], None, "index-walk"),
    ([("n", -1)], {"n": {"$gt": 3}}, "index-walk"),
    (None, {"n": {"$gt": 3}}, "index-walk"),
    ([("_createdAt", -1)], None, "index-walk"),
    ([("s", 1)], None, "scan"),
    ([("n", 1)], {"g": "c"}, "scan"),       # few matches: gathered through g's index, then sorted
    (None, {"g": "c"}, "index-lookup"),
    (None, {"loc": {"$nearSphere": [0, 45]}}, "nearest-widening"),
    (None, {"loc": {"$nearSphere": [0, 45], "$maxDistance": 5000}}, "nearest-widening"),
])
def test_explain_names_the_plan_for_admins_only(world, sort, flt, strategy):
    d, _ = world
    params = (f"&sort={q(dict(sort))}" if sort else "") + (f"&query={q(flt)}" if flt else "")
    r = d.call("GET", f"/items?explain=true&limit=20{params}", token=ADMIN_TOKEN)
    assert r.status == 200, r
    assert r.body["strategy"] == strategy, r.body
    assert all(s["plan"] for s in r.body["statements"])
    if strategy == "index-walk":
        assert any("USING INDEX" in line for s in r.body["statements"] for line in s["plan"]), r.body
        assert not any("TEMP B-TREE" in line for s in r.body["statements"] for line in s["plan"]), r.body
    assert_error(d.call("GET", f"/items?explain=true{params}"), 403, "Forbidden")


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


SLOW_CONFIG = f"""
default_permission: public
admin_token: {ADMIN_TOKEN}
readers: 2
slow_readers: 1
read_slice_ms: 10
query_time_limit: 30
"""


def slow_world(extra=""):
    return running_roostd(SLOW_CONFIG + extra)


# Behind a trusted proxy (the test itself), each request names its client.
PROXIED = 'trusted_proxies: ["127.0.0.1"]\n'
ATTACKER = {"X-Forwarded-For": "203.0.113.7"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.20"}


def slow_lane_reads(d, reason):
    """`roost_slow_lane_reads_total{reason=...}` from /metrics."""
    text = d.call("GET", "/metrics", token=ADMIN_TOKEN).raw.decode()
    for line in text.splitlines():
        if line.startswith("roost_slow_lane_reads_total") and f'reason="{reason}"' in line:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no roost_slow_lane_reads_total{{reason={reason}}} in /metrics")


def fill(d, n):
    rng = random.Random(7)
    for start in range(0, n, 100):
        ops = [{"method": "POST", "path": "/big", "body": {"s": rng.random(), "t": "x" * rng.randint(0, 40)}}
               for _ in range(start, min(n, start + 100))]
        assert d.call("POST", "/_batch", {"operations": ops}).status == 200


# An unindexed sort under a regex: a full scan of every row, well past a 10 ms slice.
def slow_list(regexes):
    """An unindexed sort under `regexes` regexes per row: a full scan whose cost grows with `regexes`."""
    letters = "abcdefghijklmnopqrstuvwyz"
    flt = {"$or": [{"t": {"$regex": f"{letters[i % 25]}{i}x*$"}} for i in range(regexes)] + [{"t": {"$regex": "xxx$"}}]}
    return f"/big?limit=5&sort={q({'s': -1})}&query={q(flt)}"


SLOW_LIST = slow_list(12)


def test_long_scans_move_to_the_slow_lane_and_other_reads_go_on():
    import concurrent.futures
    import time
    with slow_world(PROXIED) as d:
        fill(d, 30000)
        one = d.call("GET", "/big?limit=1").body[0]["_id"]
        # Heavy enough to take a while on this machine, however fast it is.
        regexes, alone = 12, 0.0
        while True:
            slow = slow_list(regexes)
            started = time.monotonic()
            assert d.call("GET", slow, headers=ATTACKER).status == 200
            alone = time.monotonic() - started
            if alone > 0.6 or regexes >= 384:
                break
            regexes *= 2
        assert alone > 0.3, f"the scan took only {alone:.3f} s even with {regexes} regexes"
        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            scans = [pool.submit(lambda: d.call("GET", slow, headers=ATTACKER)) for _ in range(6)]
            time.sleep(0.1)
            latencies = []
            for _ in range(20):
                t0 = time.monotonic()
                assert d.call("GET", f"/big/{one}", headers=BYSTANDER).status == 200
                latencies.append(time.monotonic() - t0)
            results = [(f.result(), 0) for f in scans]
        assert all(r.status == 200 and len(r.body) == 5 for r, _ in results), [r for r, _ in results]
        # Six scans queue on one slow reader; a GET by id never waits for one
        # (on two readers they would hold it up for about a scan's time).
        assert max(latencies) < alone / 2, (alone, latencies)
        expected = [x["_id"] for x in results[0][0].body]
        assert all([x["_id"] for x in r.body] == expected for r, _ in results)


def test_a_client_that_overran_a_slice_starts_its_next_reads_on_the_slow_lane():
    """One client's heavy queries, one after another, cost the readers one
    slice in all, not one each: after the first overran, its reads start on
    the slow lane (for 10 s); another client's reads do not."""
    with slow_world(PROXIED) as d:
        fill(d, 30000)
        one = d.call("GET", "/big?limit=1", headers=BYSTANDER).body[0]["_id"]
        overran, listed = slow_lane_reads(d, "overran"), slow_lane_reads(d, "address")
        assert listed == 0
        assert d.call("GET", SLOW_LIST, headers=ATTACKER).status == 200
        assert slow_lane_reads(d, "overran") == overran + 1
        for _ in range(3):
            assert d.call("GET", SLOW_LIST, headers=ATTACKER).status == 200
        assert d.call("GET", f"/big/{one}", headers=ATTACKER).status == 200
        # All four went straight to the slow lane: none ran a slice first.
        assert slow_lane_reads(d, "address") == 4
        assert slow_lane_reads(d, "overran") == overran + 1
        for _ in range(3):
            assert d.call("GET", f"/big/{one}", headers=BYSTANDER).status == 200
        assert slow_lane_reads(d, "address") == 4


def test_a_read_past_the_time_limit_is_stopped_with_a_json_503(tmp_path):
    config = SLOW_CONFIG.replace("query_time_limit: 30", "query_time_limit: 0.05")
    with running_roostd(config) as d:
        fill(d, 30000)
        r = d.call("GET", SLOW_LIST)
        assert_error(r, 503, "QueryTimeout")
        assert r.header("Retry-After")
        assert d.call("GET", "/big?limit=3").status == 200


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
