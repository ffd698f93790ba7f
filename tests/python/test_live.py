"""Issue #16: live updates over Server-Sent Events (`GET /events`,
`GET /:collection/_live`).

 1. basics: create/update/delete in commit order with ascending ids, `query`
    filters giving enter/leave, /events over two collections, bad
    subscriptions and cursors (400), anonymous callers (401), `?access_token=`;
 2. access: private entities never reach another user, `_acl.read` granted
    and revoked give enter/leave, messages and threads reach their
    participants only, others' private profile fields are removed;
 3. exactly once across reconnects at random moments (Last-Event-ID and
    ?since=) under a concurrent writer, checked against the writes, the final
    list and `_deltaset`;
 4. kill -9 and restart mid-stream: resume loses nothing; SIGTERM ends
    streams with the last chunk;
 5. logout ends the stream, heartbeats, `reset` for another database's
    cursor, live_max_connections, slow clients dropped while others go on.

Sections 2-4 are in test_live_access.py, 5 in test_live_limits.py; the daemons and
helpers they share in live_support.py. The SSE client (`LiveStream`) lives in
tests/drills/live.py (live_stream.py), the drill that
runs the same promises under kill -9 cycles (tests/drills/test_drills_quick.py runs it small).
"""

import json
import random
import time
import uuid

import pytest

from drills.common import ADMIN_TOKEN
from drills.live import cursor_seq, events_path, live_path
from roost_harness import one_request, png

from live_support import assert_ascending, assert_error, kinds, people, q, roost, until_sentinel


# ---------------------------------------------------------------------------------------------
# 1. Basics

# (method, id, body, event on the unfiltered stream, event on {"n": {"$gte": 5}})
STEPS = [
    ("PUT", "a", {"n": 1}, "create", None),
    ("PATCH", "a", {"n": 7}, "update", "enter"),
    ("PATCH", "a", {"n": 8}, "update", "update"),
    ("PUT", "b", {"n": 9}, "create", "create"),
    ("PUT", "c", {"n": "7"}, "create", None),          # numbers never equal strings
    ("PATCH", "a", {"n": 2}, "update", "leave"),
    ("PATCH", "c", {"n": 5}, "update", "enter"),
    ("DELETE", "a", None, "delete", None),
    ("DELETE", "b", None, "delete", "delete"),
    ("PUT", "c", {"n": 4, "other": True}, "update", "leave"),
]


def test_events_in_commit_order_with_filters(roost):
    coll, tag = "livePub", uuid.uuid4().hex[:6]
    plain = roost.stream(live_path(coll))
    filtered = roost.stream(live_path(coll, {"n": {"$gte": 5}}))
    api = roost.api()
    bodies = []
    for method, name, body, _, _ in STEPS:
        r = api.request(method, f"/{coll}/{tag}-{name}", body)
        assert r.status in (200, 201), (method, name, r)
        bodies.append(r.json() if method != "DELETE" else None)
    assert plain.wait_events(len(STEPS)), plain.snapshot()
    want_filtered = [(f, f"{tag}-{n}") for _, n, _, _, f in STEPS if f]
    assert filtered.wait_events(len(want_filtered)), filtered.snapshot()
    time.sleep(0.3)
    got, got_f = plain.snapshot(), filtered.snapshot()
    plain.close(), filtered.close()
    assert kinds(got) == [(k, f"{tag}-{n}") for _, n, _, k, _ in STEPS]
    assert kinds(got_f) == want_filtered
    assert_ascending(got), assert_ascending(got_f)
    for e, body in zip(got, bodies):
        assert e.collection == coll
        if e.kind == "delete":
            assert "entity" not in e.data, e.data
        else:
            assert e.entity == body, (e, e.entity, body)   # the entity as committed, _updatedAt included
    # The same change has the same position on both streams; leave carries no entity.
    ids = {cursor_seq(e.id): e for e in got}
    for e in got_f:
        assert cursor_seq(e.id) in ids and ids[cursor_seq(e.id)].entity_id == e.entity_id
        assert ("entity" in e.data) == (e.kind in ("create", "update", "enter")), e.data


def test_events_over_two_collections_in_commit_order(roost, people):
    _, token = people["alice"]
    tag = uuid.uuid4().hex[:6]
    s = roost.stream(events_path([{"collection": "livePub"}, {"collection": "liveShared", "query": {"x": 1}}]),
                     token=token)
    api = roost.api(token)
    plan = [("livePub", {"x": 0}, True), ("liveShared", {"x": 0}, False), ("liveShared", {"x": 1}, True),
            ("livePub", {"x": 1}, True), ("liveRO", None, False), ("liveShared", {"x": 1}, True)]
    want = []
    for k, (coll, body, seen) in enumerate(plan):
        if body is None:  # readonly: only the admin writes
            r = one_request(roost.port, "PUT", f"/{coll}/{tag}-{k}", {"x": 1},
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        else:
            r = api.request("PUT", f"/{coll}/{tag}-{k}", body)
        assert r.status == 201, r
        if seen:
            want.append((coll, f"{tag}-{k}"))
    assert s.wait_events(len(want)), s.snapshot()
    time.sleep(0.3)
    got = s.snapshot()
    s.close()
    assert [(e.collection, e.entity_id) for e in got] == want
    assert_ascending(got)


BAD = [
    ("/events", "InvalidQuery"),
    ("/events?subscribe=" + q("not json"), "InvalidQuery"),
    ("/events?subscribe=" + q("{}"), "InvalidQuery"),
    ("/events?subscribe=" + q("[]"), "InvalidQuery"),
    ("/events?subscribe=" + q('[{"query":{}}]'), "InvalidQuery"),
    ("/events?subscribe=" + q('[{"collection":"_secret"}]'), "InvalidCollectionName"),
    ("/events?subscribe=" + q('[{"collection":"livePub","query":[1]}]'), "InvalidQuery"),
    ("/events?subscribe=" + q('[{"collection":"livePub","query":{"$where":"1"}}]'), None),
    ("/events?subscribe=" + q(json.dumps([{"collection": "livePub"}] * 33)), "InvalidQuery"),
    ("/livePub/_live?query=" + q("{nope"), None),
    ("/livePub/_live?query=" + q('{"a":{"$regex":"("}}'), None),
    ("/livePub/_live?query=" + q('{"a":{"$bogus":1}}'), None),
    # A list cannot run it (its distance would order rows outside the element), so neither does a stream.
    ("/livePub/_live?query=" + q('{"a":{"$elemMatch":{"p":{"$nearSphere":[0,0]}}}}'), None),
    ("/users/_live?query=" + q('{"email":"a@example.com"}'), "InvalidQuery"),   # a private profile field
    ("/livePub/_live?since=garbage", "InvalidCursor"),
    ("/livePub/_live?since=" + q("cjF8eHx5"), "InvalidCursor"),
]


@pytest.mark.parametrize("path,code", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_subscriptions_are_json_400s(roost, people, path, code):
    s = roost.stream(path, token=people["bob"][1])
    assert_error(s, 400, code)


def test_garbage_last_event_id_is_400_and_post_is_405(roost, people):
    s = roost.stream(live_path("livePub"), last_event_id="not-a-cursor")
    assert_error(s, 400, "InvalidCursor")
    r = one_request(roost.port, "POST", "/events", {"subscribe": []})
    assert r.status == 405 and "GET" in r.headers.get("allow", ""), r
    r = one_request(roost.port, "POST", "/livePub/_live", {})
    assert r.status == 405, r


AUTH = [  # (path, credentials, status)
    (live_path("livePub"), None, 200),
    (live_path("liveShared"), None, 401),
    (live_path("livePriv"), None, 401),
    (live_path("liveRO"), None, 401),
    ("/users/_live", None, 401),
    (events_path([{"collection": "livePub"}, {"collection": "livePriv"}]), None, 401),
    (live_path("livePriv"), "bogus", 401),
    (live_path("livePriv"), "query:bogus", 401),
    (live_path("livePriv"), "user", 200),
    (live_path("livePriv"), "query:user", 200),
    (live_path("liveRO"), "user", 200),
    ("/users/_live", "user", 200),
    (live_path("livePriv"), "admin", 200),
    ("/files/_live", None, 401),
    ("/files/_live", "user", 200),
]


@pytest.mark.parametrize("path,cred,status", AUTH, ids=[f"auth{i}" for i in range(len(AUTH))])
def test_who_may_subscribe(roost, people, path, cred, status):
    token = {"user": people["carol"][1], "bogus": "x" * 43, "admin": ADMIN_TOKEN}
    header, sep = None, "&" if "?" in path else "?"
    if cred and cred.startswith("query:"):
        path += sep + "access_token=" + q(token[cred[6:]])
    elif cred:
        header = token[cred]
    s = roost.stream(path, token=header)
    try:
        assert s.status == status, (s.status, s.body)
        if status == 401:
            assert_error(s, 401)
        else:
            assert s.headers["content-type"].startswith("text/event-stream"), s.headers
            assert s.chunked and s.retry == 2000
    finally:
        s.close()


def test_access_token_in_the_query_streams_private_events(roost, people):
    uid, token = people["carol"]
    s = roost.stream(live_path("livePriv") + "?access_token=" + q(token))
    r = roost.api(token).request("POST", "/livePriv", {"note": 1})
    assert r.status == 201
    assert s.wait_events(1), s.snapshot()
    s.close()
    assert kinds(s.events) == [("create", r.json()["_id"])]


FILTERS = [
    {"a": 1}, {"a": {"$gt": 1}}, {"a": {"$in": [1, "1", None]}}, {"a": {"$ne": 1}}, {"a": {"$type": "string"}},
    {"a": {"$mod": [2, 0]}}, {"a": {"$not": {"$lt": 3}}}, {"tags": "x"}, {"tags": {"$all": ["x", "y"]}},
    {"tags": {"$size": 2}}, {"b.c": {"$exists": True}}, {"name": {"$regex": "^al", "$options": "i"}},
    {"$or": [{"a": 1}, {"b.c": 2}]}, {"$nor": [{"a": 1}, {"tags": "z"}]}, {"missing": None},
    {"objs": {"$elemMatch": {"x": 1, "y": {"$gte": 2}}}}, {"_id": {"$in": ["d3", "d7", "d11"]}},
]


def _random_doc(rng):
    doc = {}
    for key, values in (("a", [1, 2, 3, 4, "1", "x", None, [1, 3], [2]]), ("name", ["alice", "Alan", "bob", 7]),
                        ("tags", [["x"], ["x", "y"], ["y", "z"], [], "x"]), ("b", [{"c": 1}, {"c": 2}, {"d": 1}, 5]),
                        ("objs", [[{"x": 1, "y": 2}], [{"x": 1}, {"y": 3}], [{"x": 2, "y": 5}]])):
        if rng.random() < 0.7:
            doc[key] = rng.choice(values)
    return doc


def test_stream_filters_agree_with_list_filters(roost, people):
    """Each filter's events, replayed (create/enter add, delete/leave remove),
    give exactly what GET with the same query lists, after random creates,
    replacements and deletes: the in-memory matcher agrees with SQL."""
    rng, coll = random.Random(1616), "liveDiff" + uuid.uuid4().hex[:6]
    token = people["alice"][1]
    streams = [roost.stream(live_path(coll, f), token=token) for f in FILTERS]
    assert [s.status for s in streams] == [200] * len(FILTERS), [s.body for s in streams if s.status != 200]
    api = roost.api(token)
    plain = roost.stream(live_path(coll), token=token)
    for k in range(40):
        assert api.request("PUT", f"/{coll}/d{k}", _random_doc(rng)).status == 201
    for _ in range(40):
        k = rng.randrange(40)
        r = (api.request("DELETE", f"/{coll}/d{k}") if rng.random() < 0.15
             else api.request("PUT", f"/{coll}/d{k}", _random_doc(rng)))
        assert r.status in (200, 201, 404), r
    assert api.request("PUT", f"/{coll}/zz-done", {}).status == 201
    until_sentinel(plain, "zz-done")   # every stream's events leave in the same round
    time.sleep(0.2)
    plain.close()
    assert sum(bool(s.events) for s in streams) >= len(FILTERS) - 2, "the filters match too little to test"
    problems = []
    for f, s in zip(FILTERS, streams):
        s.close()
        members = set()
        for e in s.events:
            if e.kind in ("create", "enter"):
                problems += [f"{f}: {e} but already a member"] if e.entity_id in members else []
                members.add(e.entity_id)
            elif e.kind in ("delete", "leave", "update"):
                if e.entity_id not in members:
                    problems.append(f"{f}: {e} for a non-member")
                if e.kind != "update":
                    members.discard(e.entity_id)
        listed = {d["_id"] for d in api.request(
            "GET", f"/{coll}?limit=1000&query={q(json.dumps(f))}").json()}
        if members != listed:
            problems.append(f"{f}: stream says {sorted(members)}, list says {sorted(listed)}")
    assert not problems, problems


def test_files_stream_gets_uploads(roost, people):
    _, token = people["carol"]
    s = roost.stream("/files/_live", token=token)
    r = roost.api(token).request("POST", "/files", png(4, 4, 3), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    assert s.wait(lambda st: any(e.entity_id == r.json()["_id"] for e in st.events)), s.snapshot()
    s.close()
    e = next(e for e in s.events if e.entity_id == r.json()["_id"])
    assert (e.kind, e.collection, e.entity["sha256"]) == ("create", "files", r.json()["sha256"])
