"""$nearSphere where points are dense: the widening search starts below 100 m
when a 100 m box holds many more points than the page wants, and still
answers exactly the reference's nearest-first order, across pages, keyset
cursors and skips."""
import json
import math
import random

import pytest

from roost_harness import ADMIN_TOKEN, engine, json_query as q, running_roostd

CONFIG = f"""
default_permission: public
admin_token: {ADMIN_TOKEN}
collections:
  spots:
    indexes: ["loc:geo"]
"""
CENTRE = [2.3522, 48.8566]


def metres(a, b):
    """Great-circle distance as Roost computes it (MongoDB's earth radius)."""
    (x1, y1), (x2, y2) = a, b
    h = math.sin(math.radians(y2 - y1) / 2) ** 2 + math.cos(math.radians(y1)) * math.cos(math.radians(y2)) * math.sin(math.radians(x2 - x1) / 2) ** 2
    return 2 * math.asin(min(1, math.sqrt(h))) * 6378100.0


@pytest.fixture(scope="module")
def dense():
    rng = random.Random(5)
    # 1,500 points within ~120 m of the centre (about 1 a 30 m²), 300 spread over 50 km.
    points = [[CENTRE[0] + rng.uniform(-0.0016, 0.0016), CENTRE[1] + rng.uniform(-0.0011, 0.0011)] for _ in range(1500)]
    points += [[CENTRE[0] + rng.uniform(-0.35, 0.35), CENTRE[1] + rng.uniform(-0.22, 0.22)] for _ in range(300)]
    rng.shuffle(points)
    with running_roostd(CONFIG) as d:
        yield d, seed(d, points)


def seed(d, points):
    """Creates a spot at each point (`/_batch`, 100 a request); returns the documents."""
    docs = []
    for start in range(0, len(points), 100):
        ops = [{"method": "POST", "path": "/spots", "body": {"k": start + i, "loc": p}} for i, p in enumerate(points[start:start + 100])]
        r = d.call("POST", "/_batch", {"operations": ops})
        assert r.status == 200, r
        docs += [json.loads(x["body"]) if isinstance(x["body"], str) else x["body"] for x in r.body["results"]]
    return docs


def ids(d, path):
    r = d.call("GET", path)
    assert r.status == 200, (path, r)
    return [x["_id"] for x in r.body], r.header("X-Roost-Next")


@pytest.mark.parametrize("centre", [CENTRE, [CENTRE[0] + 0.0012, CENTRE[1] - 0.0008], [CENTRE[0] + 0.01, CENTRE[1]]],
                         ids=["middle", "edge", "outside"])
@pytest.mark.parametrize("page", [1, 20, 150])
def test_dense_nearest_pages_match_the_reference(dense, centre, page):
    d, docs = dense
    flt = {"loc": {"$nearSphere": centre}}
    ranked = sorted(((metres(centre, x["loc"]), x["_id"]) for x in docs))
    expected = [i for _, i in ranked]
    plan = d.call("GET", f"/spots?limit={page}&query={q(flt)}&explain=true", token=ADMIN_TOKEN)
    # SQLite widens boxes on its R*Tree; PostgreSQL walks the GiST index nearest first (docs/ENGINES.md, Geo).
    assert plan.status == 200 and plan.body["strategy"] == ("nearest-knn" if engine.name() == "postgresql" else "nearest-widening"), plan
    first, _ = ids(d, f"/spots?limit={page}&query={q(flt)}")
    assert first == expected[:page]
    seen, after = [], None
    for _ in range(6):
        got, after = ids(d, f"/spots?limit={page}&query={q(flt)}" + (f"&after={after}" if after else ""))
        seen += got
        if not after:
            break
    assert seen == expected[:len(seen)] and len(seen) == min(len(expected), 6 * page)
    for skip in (page, 400):
        got, _ = ids(d, f"/spots?limit={page}&skip={skip}&query={q(flt)}")
        assert got == expected[skip:skip + page]


def test_a_dense_centre_starts_the_search_below_100_metres(dense):
    """The first step's radius adapts: where a 100 m box holds far more points
    than the page, the plan has steps below 100 m (more statements) than where
    it holds few."""
    if engine.name() == "postgresql":
        pytest.skip("SQLite's widening steps (PostgreSQL: one nearest-first probe, test_query_plans.py)")
    d, _ = dense

    def steps(centre):
        flt = {"loc": {"$nearSphere": centre}}
        r = d.call("GET", f"/spots?limit=20&query={q(flt)}&explain=true", token=ADMIN_TOKEN)
        assert r.status == 200, r
        return len(r.body["statements"])

    assert steps(CENTRE) > steps([CENTRE[0] + 0.01, CENTRE[1]])


def test_postgresql_probes_the_points_tables_nearest_index_and_builds_a_missing_one():
    """PostgreSQL's probe walks the points table's k-nearest index (docs/ENGINES.md, Geo). A points table
    made before that index (dropped here) answers the same pages without it, and gets it at the next start."""
    if engine.name() != "postgresql":
        pytest.skip("PostgreSQL's points table (SQLite widens boxes on its R*Tree: the tests above)")
    rng = random.Random(9)
    points = [[CENTRE[0] + rng.uniform(-0.02, 0.02), CENTRE[1] + rng.uniform(-0.015, 0.015)] for _ in range(300)]
    with running_roostd(CONFIG) as d:
        docs = seed(d, points)
        flt = {"loc": {"$nearSphere": [CENTRE[0] + 0.003, CENTRE[1]]}}
        expected = [i for _, i in sorted((metres(flt["loc"]["$nearSphere"], x["loc"]), x["_id"]) for x in docs)]

        def probe_walks_near_index():
            plan = d.call("GET", f"/spots?limit=20&query={q(flt)}&explain=true", token=ADMIN_TOKEN)
            assert plan.status == 200 and plan.body["strategy"] == "nearest-knn", plan
            return any("Index Scan using" in line and line.rstrip().split(" on ")[0].endswith("_near")
                       for line in plan.body["statements"][0]["plan"])

        def pages():
            return [ids(d, f"/spots?limit=20&skip={skip}&query={q(flt)}")[0] for skip in (0, 20, 140)]

        want = [expected[0:20], expected[20:40], expected[140:160]]
        assert probe_walks_near_index()
        assert pages() == want
        names = [row[0] for row in engine.sql(d.data_dir, "SELECT indexname FROM pg_indexes WHERE indexname LIKE ?", ("%\\_p\\_near",))]
        assert len(names) == 1, names
        engine.sql(d.data_dir, f"DROP INDEX {names[0]}")
        assert pages() == want
        d.restart()
        assert "k-nearest index" in d.log_text()
        assert [row[0] for row in engine.sql(d.data_dir, "SELECT indexname FROM pg_indexes WHERE indexname = ?", (names[0],))] == names
        assert probe_walks_near_index()
        assert pages() == want
