"""Hostile input aimed at the database engine rather than at Roost's own
parsing: values PostgreSQL cannot hold or cast (NUL, numbers at the ends of
a double's range, geo at the edges), values too large for an index entry,
and a private row crafted to make every other caller's list fail. Each must
be a clear 4xx or a normal answer, never a 500, and never change what
another caller sees. Runs on both engines (`make test-python-postgresql`
runs it on PostgreSQL)."""

import random
import string

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, engine, json_query, running_roostd

CONFIG = FAST_HASHING + f"""admin_token: {ADMIN_TOKEN}
collections:
  secrets: {{permission: private}}
  pub:
    permission: public
    indexes: [tag, "loc:geo"]
"""


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        d.alice = d.new_user("alice")
        d.bob = d.new_user("bob")
        yield d


def no_server_error(r, what):
    assert r.status < 500, (what, r)
    if r.status >= 400:
        assert set(r.body) == {"error", "description"}, (what, r)
    return r


def test_nul_cannot_be_stored_so_no_row_can_poison_other_callers_reads(roost):
    a, ta = roost.alice
    _, tb = roost.bob
    for body in ({"_id": f"{a}:poison", "_acl": {"read": ["\u0000"]}}, {"_id": f"{a}:poison2", "s": "x\u0000y"},
                 {"_id": f"{a}:poison3", "k\u0000": 1}, {"_id": f"{a}:poison4", "s": ["\u0000"]}):
        assert_error(roost.call("POST", "/secrets", body, token=ta), 400, "InvalidDocument")
    assert roost.call("POST", "/secrets", {"_id": f"{a}:fine", "s": "x"}, token=ta).status == 201
    for path in ("/secrets", "/secrets/_count", "/secrets?query=" + json_query({"s": {"$regex": "^x"}}),
                 "/secrets?sort=" + json_query({"s": -1})):
        r = no_server_error(roost.call("GET", path, token=tb), path)
        assert r.status == 200 and r.body in ([], {"count": 0}), (path, r)
    r = roost.call("GET", "/secrets?query=" + json_query({"s": "x"}), token=ta)
    assert r.status == 200 and [d["_id"] for d in r.body] == [f"{a}:fine"], r


@pytest.mark.parametrize("flt", [
    {"n": {"$gt": 5e-324}}, {"n": {"$lt": -1.7976931348623157e308}}, {"n": {"$in": [1e308, -5e-324, 2**63 - 1]}},
    {"n": {"$mod": [2**63 - 1, 1]}}, {"n": {"$mod": [-1, 0]}}, {"n": {"$size": 2**62}}, {"n": {"$gte": -(2**63)}},
    {"n.0.1.2": {"$type": "number"}}, {"k" * 4000: 1}, {"n": {"$all": [1e-300, 1e300]}},
    {"loc": {"$geoWithin": {"$centerSphere": [[1e308, 1e308], 1e308]}}},
    {"loc": {"$geoWithin": {"$box": [[-1e308, -1e308], [1e308, 1e308]]}}},
    {"loc": {"$nearSphere": [1e308, -1e308], "$maxDistance": 1e308}},
    {"loc": {"$nearSphere": [-180, 90], "$minDistance": 1e-300}},
])
def test_numbers_and_shapes_at_the_edges_never_fail_in_the_database(roost, flt):
    _, ta = roost.alice
    for doc in ({"n": 5e-324, "loc": [180, -90]}, {"n": -1.7976931348623157e308, "loc": [-180, 90]},
                {"n": [2**63 - 1, -(2**63)], "loc": [0, 0]}, {"n": "text"}):
        assert roost.call("POST", "/pub", doc, token=ta).status == 201
    # A geo-indexed field holds a point a geo query can find, or the write is a clear 400 (GeoPointCheck).
    for loc in ([1e308, -1e308], ["a", True], [37.77, -122.48], {"lat": 1, "lng": 2}, [1], [1, 2, 3]):
        r = roost.call("POST", "/pub", {"n": 1, "loc": loc}, token=ta)
        assert (r.status, r.body["error"]) == (400, "InvalidDocument") and "[longitude, latitude]" in r.body["description"], (loc, r)
    for extra in ("", "&sort=" + json_query({"n": 1}), "&count=true"):
        no_server_error(roost.call("GET", "/pub?query=" + json_query(flt) + extra, token=ta), (flt, extra))
    no_server_error(roost.call("GET", "/pub/_count?query=" + json_query(flt), token=ta), flt)


def test_a_value_too_large_for_an_index_entry_is_a_clear_400_and_changes_nothing(roost):
    _, ta = roost.alice
    rng = random.Random(7)
    big = "".join(rng.choice(string.ascii_letters) for _ in range(6000))  # incompressible
    before = roost.call("GET", "/pub/_count", token=ta).body["count"]
    for body in ({"tag": big}, {"tag": [big]}, {"tag": {"inner": big}}):
        r = roost.call("POST", "/pub", body, token=ta)
        if engine.name() == "postgresql":
            assert_error(r, 400, "InvalidDocument")
            assert "index" in r.body["description"], r
        else:  # SQLite's value index holds any length
            assert r.status == 201, r
    r = roost.call("POST", "/pub", {"_id": "small-tag", "tag": "small"}, token=ta)
    assert r.status == 201, r
    # An update to an oversized value fails alone; the row keeps what it held.
    if engine.name() == "postgresql":
        r = roost.call("PATCH", "/pub/small-tag", {"tag": big}, token=ta)
        assert_error(r, 400, "InvalidDocument")
        assert roost.call("GET", "/pub/small-tag", token=ta).body["tag"] == "small"
        assert roost.call("GET", "/pub/_count", token=ta).body["count"] == before + 1
    assert "database error" not in roost.log_text()


def test_an_id_with_nul_in_the_url_is_absent_on_both_engines(roost):
    """No stored id holds NUL (ids refuse control characters), so a read,
    change or delete of one is a 404, as for any absent id, on either engine."""
    _, ta = roost.alice
    for method, body in (("GET", None), ("PATCH", {"s": 1}), ("DELETE", None)):
        for path in ("/pub/nul%00id", "/secrets/nul%00id"):
            assert_error(roost.call(method, path, body, token=ta), 404, "NotFound")
    assert_error(roost.call("PUT", "/pub/nul%00id", {"s": 1}, token=ta), 400)


def test_a_geo_point_is_checked_on_every_write_and_a_refusal_changes_nothing(roost):
    _, ta = roost.alice
    doc = roost.call("POST", "/pub", {"n": 2, "loc": [-122.48, 37.77]}, token=ta).body
    path = f"/pub/{doc['_id']}"
    for method, body in (("PATCH", {"loc": [37.77, -122.48]}), ("PUT", {"n": 2, "loc": {"lat": 37.77, "lng": -122.48}}),
                         ("PATCH", {"loc": [200, 0]})):
        r = roost.call(method, path, body, token=ta)
        assert (r.status, r.body["error"]) == (400, "InvalidDocument") and "[longitude, latitude]" in r.body["description"], r
    assert roost.call("GET", path, token=ta).body["loc"] == [-122.48, 37.77]
    # Other fields change freely; null (or no field) leaves the index.
    assert roost.call("PATCH", path, {"n": 3}, token=ta).status == 200
    assert roost.call("PATCH", path, {"loc": None}, token=ta).status == 200
    r = roost.call("POST", "/_batch", {"operations": [{"method": "POST", "path": "/pub", "body": {"loc": [0, 91]}}]}, token=ta)
    assert (r.status, r.body["error"]) == (400, "InvalidDocument") and "latitude 91" in r.body["description"], r
