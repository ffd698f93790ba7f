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

The SSE client (`LiveStream`) lives in tests/drills/live.py, the drill that
runs the same promises under kill -9 cycles (tests/drills/test_drills_quick.py runs it small).
"""

import json
import random
import threading
import time
import urllib.parse
import uuid

import pytest

from drills.common import ADMIN_TOKEN, list_all
from drills.live import LiveStream, cursor_seq, events_path, live_path, metric
from roost_harness import Client, Roostd, cursors, one_request, png

CONFIG = f"""\
password_cost: interactive
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
default_permission: shared
collections:
  livePub: {{permission: public}}
  liveShared: {{permission: shared}}
  livePriv: {{permission: private}}
  liveRO: {{permission: readonly}}
"""

LIMITS_CONFIG = CONFIG + "live_max_connections: 3\nlive_buffer_bytes: 65536\nsession_lifetime: 3\n"
PER_ADDRESS_CONFIG = CONFIG + 'live_max_connections: 10\nlive_max_per_address: 2\ntrusted_proxies: ["127.0.0.1"]\n'


PASSWORD = "correct horse battery"


def q(s):
    return urllib.parse.quote(s, safe="")


class Node(Roostd):
    """A roostd with a keep-alive client per token (no retries: a dropped connection is an error here)."""

    usernames = {}

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        cursors.register(self.data_dir)   # event ids are sealed: the checks open them with its key

    def api(self, token=None):
        return Client(self.port, timeout=15, token=token)

    def new_user(self, name):
        """Signs up `name` plus a random suffix; returns (user _id, token)."""
        username = f"{name}-{uuid.uuid4().hex[:6]}"
        r = self.api().request("POST", "/users", {"username": username, "password": PASSWORD,
                                                  "email": f"{name}@example.com"})
        assert r.status == 201, r
        self.usernames[r.json()["user"]["_id"]] = username
        return r.json()["user"]["_id"], r.json()["token"]

    def stream(self, path, token=None, **kw):
        s = LiveStream(self.port, path, token=token, **kw)
        if s.status == 200:
            assert s.wait_ready(10), f"no retry: preamble on {path}"
        return s


def _daemon(tmp_path_factory, name, config):
    node = Node(tmp_path_factory.mktemp(name), config)
    node.start()
    return node


@pytest.fixture(scope="module")
def roost(tmp_path_factory):
    node = _daemon(tmp_path_factory, "live", CONFIG)
    yield node
    node.stop()
    node.close()


@pytest.fixture(scope="module")
def limits(tmp_path_factory):
    node = _daemon(tmp_path_factory, "live-limits", LIMITS_CONFIG)
    yield node
    node.stop()
    node.close()


@pytest.fixture(scope="module")
def people(roost):
    return {name: roost.new_user(name) for name in ("alice", "bob", "carol")}


def kinds(events):
    return [(e.kind, e.entity_id) for e in events]


def assert_ascending(events):
    seqs = [cursor_seq(e.id) for e in events]
    assert all(s is not None for s in seqs), events
    assert seqs == sorted(set(seqs)), f"ids not strictly ascending: {seqs}"


def assert_error(reply_or_stream, status, code=None):
    body = reply_or_stream.json()
    assert reply_or_stream.status == status, (reply_or_stream.status, body)
    assert isinstance(body, dict) and set(body) == {"error", "description"}, body
    if code:
        assert body["error"] == code, body


def until_sentinel(stream, sentinel_id, timeout=10):
    assert stream.wait(lambda s: any(e.entity_id == sentinel_id for e in s.events) or s.end, timeout), \
        f"sentinel {sentinel_id} did not arrive: {stream.snapshot()}"
    return [e for e in stream.snapshot()]


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


# ---------------------------------------------------------------------------------------------
# 2. Access

def test_private_entities_and_acl_changes(roost, people):
    (a, ta), (b, tb) = people["alice"], people["bob"]
    alice, bob = roost.api(ta), roost.api(tb)
    sa, sb = roost.stream(live_path("livePriv"), token=ta), roost.stream(live_path("livePriv"), token=tb)
    tag = uuid.uuid4().hex[:6]
    n1, n2, n3 = (f"{a}:{tag}-{k}" for k in (1, 2, 3))
    steps = [  # (client, method, id, body, alice's event, bob's event)
        (alice, "PUT", n1, {"secret": 1}, "create", None),
        (alice, "PUT", n2, {"v": 1}, "create", None),
        (alice, "PATCH", n2, {"_acl": {"read": [b]}}, "update", "enter"),
        (alice, "PATCH", n2, {"v": 2}, "update", "update"),
        (alice, "PATCH", n2, {"_acl": {"read": []}}, "update", "leave"),
        (alice, "PATCH", n2, {"v": 3}, "update", None),
        (alice, "PATCH", n1, {"_acl": {"write": [b]}}, "update", "enter"),     # write implies read
        (bob, "PATCH", n1, {"secret": 2}, "update", "update"),
        (alice, "PATCH", n1, {"_acl": {"write": []}}, "update", "leave"),
        (alice, "DELETE", n1, None, "delete", None),
        (alice, "PUT", n3, {"_acl": {"read": [b]}}, "create", "create"),       # the sentinel
    ]
    want_a, want_b, entities = [], [], {}
    for client, method, i, body, ea, eb in steps:
        r = client.request(method, f"/livePriv/{q(i)}", body)
        assert r.status in (200, 201), (method, i, r)
        if ea:
            want_a.append((ea, i))
        if eb:
            want_b.append((eb, i))
            entities[len(want_b) - 1] = r.json() if method != "DELETE" else None
    until_sentinel(sb, n3)
    assert sa.wait_events(len(want_a)), sa.snapshot()
    time.sleep(0.3)
    sa.close(), sb.close()
    assert kinds(sa.events) == want_a
    assert kinds(sb.events) == want_b, "bob saw a change of a note he could not read, or missed one"
    for k, e in enumerate(sb.events):
        if e.kind in ("enter", "update", "create"):
            assert e.entity == entities[k]
        else:
            assert "entity" not in e.data
    assert_ascending(sb.events)
    # What the stream says agrees with a delta since bob's first event and with his list.
    assert {d["_id"] for d in list_all(roost.port, "livePriv", token=tb)} >= {n3}
    assert n2 not in {d["_id"] for d in list_all(roost.port, "livePriv", token=tb)}


def test_messages_and_threads_reach_participants_only(roost, people):
    (a, ta), (b, tb), (c, tc) = people["alice"], people["bob"], people["carol"]
    topics = [{"collection": "messages"}, {"collection": "threads"}]
    sb, sc = roost.stream(events_path(topics), token=tb), roost.stream(events_path(topics), token=tc)
    r1 = roost.api(ta).request("POST", "/messages", {"recipientId": b, "text": "hello bob"})
    r2 = roost.api(tb).request("POST", "/messages", {"recipientId": a, "text": "hi alice"})
    r3 = roost.api(tc).request("POST", "/messages", {"recipientId": a, "text": "carol here"})  # carol's sentinel
    assert (r1.status, r2.status, r3.status) == (201, 201, 201), (r1, r2, r3)
    thread_ab, thread_ac = ":".join(sorted([a, b])), ":".join(sorted([a, c]))
    until_sentinel(sc, thread_ac)
    assert sb.wait(lambda s: sum(e.entity_id == thread_ab for e in s.events) >= 2), sb.snapshot()
    time.sleep(0.3)
    sb.close(), sc.close()
    got_b = [(e.collection, e.kind, e.entity_id) for e in sb.events]
    first_thread = ("threads", "create" if r1.json()["threadId"] == thread_ab else "update", thread_ab)
    assert got_b[:2] == [("messages", "create", r1.json()["_id"]), first_thread], got_b
    assert got_b[2:] == [("messages", "create", r2.json()["_id"]), ("threads", "update", thread_ab)], got_b
    assert sb.events[0].entity["text"] == "hello bob" and sb.events[0].entity["senderId"] == a
    assert sb.events[3].entity["lastMessage"]["_id"] == r2.json()["_id"]
    # carol sees her own message and thread only: nothing of alice and bob's.
    assert all(e.entity_id in (r3.json()["_id"], thread_ac) for e in sc.events), kinds(sc.events)
    assert_ascending(sb.events)


def test_users_stream_hides_others_private_fields(roost, people):
    (a, ta), (b, tb) = people["alice"], people["bob"]
    sa, sb = roost.stream("/users/_live", token=ta), roost.stream("/users/_live", token=tb)
    r = roost.api(ta).request("PATCH", f"/users/{a}", {"email": "alice2@example.com", "bio": "x"})
    assert r.status == 200, r
    assert sa.wait_events(1) and sb.wait_events(1), (sa.snapshot(), sb.snapshot())
    sa.close(), sb.close()
    assert (sb.events[0].kind, sb.events[0].entity_id) == ("update", a)
    assert "email" not in sb.events[0].entity and sb.events[0].entity["bio"] == "x", sb.events[0].entity
    assert sa.events[0].entity["email"] == "alice2@example.com"
    assert "password" not in json.dumps(sb.events[0].data).lower()


# ---------------------------------------------------------------------------------------------
# 3. Exactly once across reconnects

def test_exactly_once_across_random_reconnects(roost, people):
    rng, wrng = random.Random(16), random.Random(61)
    uid, token = people["alice"]
    coll, tag, total = "liveShared", uuid.uuid4().hex[:6], 300
    expected = []           # (kind, _id, _updatedAt) in commit order: one writer, one request at a time
    done = threading.Event()
    errors = []

    def write():
        api, alive = roost.api(token), []
        try:
            for k in range(total):
                r0 = wrng.random()
                if r0 < 0.4 or not alive:
                    i = f"{tag}-{k}"
                    r = api.request("PUT", f"/{coll}/{i}", {"k": k, "pad": "x" * wrng.randint(0, 300)})
                    alive.append(i)
                    expected.append(("create", i, r.json()["_updatedAt"]))
                elif r0 < 0.85:
                    i = wrng.choice(alive)
                    r = api.request("PATCH", f"/{coll}/{i}", {"k": k})
                    expected.append(("update", i, r.json()["_updatedAt"]))
                else:
                    i = alive.pop(wrng.randrange(len(alive)))
                    r = api.request("DELETE", f"/{coll}/{i}")
                    expected.append(("delete", i, None))
                if r.status not in (200, 201):
                    errors.append(r)
                    return
                time.sleep(wrng.choice([0, 0, 0.002, 0.01]))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            done.set()

    cursor0 = roost.api(token).request("GET", f"/{coll}/_deltaset?limit=1").headers["x-roost-cursor"]
    got, sessions, during, last_id = [], 0, 0, None
    first = roost.stream(live_path(coll), token=token)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert first.wait_events(1), first.snapshot()
    stream, deadline = first, time.monotonic() + 40
    while time.monotonic() < deadline:
        # Drop at a random moment (mid-chunk or between events), sometimes at once.
        time.sleep(rng.choice([0, 0.001, 0.01, 0.03, 0.08]))
        stream.close()
        got += stream.snapshot()
        last_id = got[-1].id if got else last_id
        sessions += 1
        during += not done.is_set()
        if done.is_set() and len(got) >= len(expected):
            break
        if rng.random() < 0.5:
            stream = roost.stream(live_path(coll, since=last_id), token=token)
        else:
            stream = roost.stream(live_path(coll), token=token, last_event_id=last_id)
        assert stream.status == 200, stream.body
    writer.join(10)
    assert not errors, errors
    assert during >= 20, (sessions, during)  # reconnects under the writer
    assert_ascending(got)   # no duplicate, nothing out of order
    assert [(e.kind, e.entity_id, (e.entity or {}).get("_updatedAt")) for e in got] == expected
    # Replaying the events gives the collection as listed, and as _deltaset tells it.
    copy = {}
    for e in got:
        if e.kind == "delete":
            copy.pop(e.entity_id)
        else:
            copy[e.entity_id] = e.entity
    listed = {d["_id"]: d for d in list_all(roost.port, coll, token=token) if d["_id"].startswith(tag)}
    assert copy == listed
    delta = roost.api(token).request("GET", f"/{coll}/_deltaset?since={q(cursor0)}&limit=10000").json()
    assert {d["_id"]: d for d in delta["changed"] if d["_id"].startswith(tag)} == copy
    assert {d["_id"] for d in delta["deleted"]} <= {i for k, i, _ in expected if k == "delete"}


# ---------------------------------------------------------------------------------------------
# 4. Restarts

def test_kill9_mid_stream_then_resume_loses_nothing(tmp_path):
    node = Node(tmp_path, CONFIG)
    node.start()
    try:
        written, in_doubt = [], []
        s = node.stream(live_path("livePub"))
        stop = threading.Event()

        def write():
            api, k = node.api(), 0
            while not stop.is_set() and k < 2000:
                try:
                    r = api.request("PUT", f"/livePub/d{k}", {"k": k})
                    written.append(f"d{k}") if r.status == 201 else in_doubt.append(f"d{k}")
                except Exception:  # noqa: BLE001 - killed: this one may or may not have committed
                    in_doubt.append(f"d{k}")
                    return
                k += 1

        t = threading.Thread(target=write, daemon=True)
        t.start()
        assert s.wait_events(50), s.snapshot()
        node.kill9()
        t.join(10)
        assert s.wait_end(5) and s.end in ("eof", "reset"), s.end
        before = s.snapshot()
        assert_ascending(before)
        node.start()
        committed = [d["_id"] for d in sorted(list_all(node.port, "livePub"), key=lambda d: d["k"])]
        assert committed[:len(written)] == written and len(committed) - len(written) <= 1, (len(committed), len(written))
        r = node.stream(live_path("livePub"), last_event_id=before[-1].id)
        assert r.status == 200
        assert node.api().request("PUT", "/livePub/after", {"k": 10**6}).status == 201
        after = until_sentinel(r, "after")
        r.close()
        events = before + after
        assert_ascending(events)
        assert [e.entity_id for e in events] == committed + ["after"], "lost or repeated across kill -9"
        assert all(e.kind == "create" for e in events)
    finally:
        node.close()


def test_sigterm_ends_streams_cleanly_and_resume_works(tmp_path):
    node = Node(tmp_path, CONFIG)
    node.start()
    try:
        streams = [node.stream(live_path("livePub")), node.stream(events_path([{"collection": "livePub"}]))]
        api = node.api()
        for k in range(20):
            assert api.request("PUT", f"/livePub/t{k}", {"k": k}).status == 201
        assert all(s.wait_events(20) for s in streams)
        started = time.monotonic()
        assert node.stop() == 0
        for s in streams:
            assert s.wait_end(5), "the stream outlived the daemon"
            assert s.end == "clean", f"the stream ended with {s.end}, not the chunked body's last chunk"
        assert time.monotonic() - started < 10
        node.start()
        r = node.stream(live_path("livePub"), last_event_id=streams[0].events[9].id)
        assert node.api().request("PUT", "/livePub/t20", {"k": 20}).status == 201
        got = until_sentinel(r, "t20")
        r.close()
        assert [e.entity_id for e in got] == [f"t{k}" for k in range(10, 21)]
    finally:
        node.close()


# ---------------------------------------------------------------------------------------------
# 5. Sessions, heartbeats, resets, limits

@pytest.mark.parametrize("how", ["logout", "admin-revoke", "password-change"])
def test_revoked_session_ends_the_stream(roost, how):
    uid, token = roost.new_user("leaver")
    _, other = roost.new_user("stayer")
    s = roost.stream(live_path("liveShared"), token=token)
    keep = roost.stream(live_path("liveShared"), token=other)
    if how == "logout":
        r = roost.api(token).request("POST", "/logout")
    elif how == "admin-revoke":
        r = roost.api(ADMIN_TOKEN).request("DELETE", f"/admin/users/{uid}/sessions")
    else:  # a new password signs out the user's other sessions
        login = roost.api().request("POST", "/login", {"username": roost.usernames[uid], "password": PASSWORD})
        r = roost.api(login.json()["token"]).request("PATCH", f"/users/{uid}",
                                                      {"password": "another horse battery", "oldPassword": PASSWORD})
    assert r.status in (200, 204), r
    t0 = time.monotonic()
    assert s.wait_end(3), f"the stream of a revoked session ({how}) is still open after 3 s"
    assert time.monotonic() - t0 < 2.5, time.monotonic() - t0   # live_heartbeat is 1 s
    assert roost.api(other).request("POST", "/liveShared", {"after": how}).status == 201
    assert keep.wait_events(1) and keep.end is None, "another user's stream ended with the revocation"
    keep.close()
    assert roost.stream(live_path("liveShared"), token=token).status == 401


def test_expired_session_ends_the_stream(limits):
    _, token = limits.new_user("brief")          # session_lifetime: 3
    s = limits.stream(live_path("liveShared"), token=token)
    t0 = time.monotonic()
    assert s.wait_end(7), "the stream outlived its session (3 s) by more than 4 s"
    assert 1.5 < time.monotonic() - t0, "the stream ended before its session expired"
    assert limits.stream(live_path("liveShared"), token=token).status == 401


def test_heartbeats_arrive(roost):
    s = roost.stream(live_path("livePub"))
    assert s.wait(lambda st: len(st.comments) >= 3, 6), s.comments
    s.close()
    assert all(text == "heartbeat" for text, _ in s.comments)
    gaps = [b[1] - a[1] for a, b in zip(s.comments, s.comments[1:])]
    assert all(0.5 < g < 2.5 for g in gaps), gaps


def test_cursor_from_another_database_gets_reset_then_live(roost, limits):
    other = limits.stream(live_path("livePub"))
    assert limits.api().request("POST", "/livePub", {"x": 1}).status == 201
    assert other.wait_events(1)
    other.close()
    foreign = other.events[0].id
    s = roost.stream(live_path("livePub"), last_event_id=foreign)
    assert s.wait_events(1), s.snapshot()
    r = roost.api().request("POST", "/livePub", {"after": "reset"})
    assert s.wait_events(2), s.snapshot()
    s.close()
    assert [e.kind for e in s.events] == ["reset", "create"], kinds(s.events)
    assert s.events[1].entity_id == r.json()["_id"]
    assert cursor_seq(s.events[0].id) < cursor_seq(s.events[1].id)
    # The reset's id is a good cursor: resuming from it replays the create.
    again = roost.stream(live_path("livePub"), last_event_id=s.events[0].id)
    assert again.wait_events(1)
    again.close()
    assert cursor_seq(again.events[0].id) == cursor_seq(s.events[1].id)
    assert (again.events[0].kind, again.events[0].entity_id) == ("create", s.events[1].entity_id)


def _wait_streams(node, n, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if metric(node.port, "roost_live_streams") == n:
            return True
        time.sleep(0.1)
    return False


def test_live_max_connections(limits):
    assert _wait_streams(limits, 0)
    streams = [limits.stream(live_path("livePub")) for _ in range(3)]
    try:
        assert [s.status for s in streams] == [200, 200, 200]
        fourth = limits.stream(live_path("livePub"))
        assert fourth.status == 503, fourth.body
        assert fourth.headers.get("retry-after"), fourth.headers
        assert_error(fourth, 503)
        assert limits.api().request("GET", "/healthz").status == 200
        assert _wait_streams(limits, 3)
        streams.pop().close()
        assert _wait_streams(limits, 2)
        streams.append(limits.stream(live_path("livePub")))
        assert streams[-1].status == 200, "a freed slot was not given back"
    finally:
        for s in streams:
            s.close()
    assert _wait_streams(limits, 0)


@pytest.fixture(scope="module")
def per_address(tmp_path_factory):
    node = _daemon(tmp_path_factory, "live-per-address", PER_ADDRESS_CONFIG)
    yield node
    node.stop()
    node.close()


def test_live_max_per_address(per_address):
    """One client address cannot take every stream: past live_max_per_address
    it gets 429 (JSON, Retry-After), while other addresses (named by a trusted
    proxy, as the throttles see them) still get streams, and a closed stream
    gives its address's slot back."""
    node = per_address
    proxied = {"X-Forwarded-For": "203.0.113.7"}
    direct = [node.stream(live_path("livePub")) for _ in range(2)]
    via = []
    try:
        assert [s.status for s in direct] == [200, 200]
        third = node.stream(live_path("livePub"))
        assert_error(third, 429, "TooManyStreams")
        assert int(third.headers.get("retry-after", "0")) > 0, third.headers
        via = [node.stream(live_path("livePub"), headers=proxied) for _ in range(2)]
        assert [s.status for s in via] == [200, 200], [s.body for s in via]
        assert_error(node.stream(live_path("livePub"), headers=proxied), 429, "TooManyStreams")
        # A third address is unaffected; refused streams took no slot.
        other = node.stream(live_path("livePub"), headers={"X-Forwarded-For": "198.51.100.1"})
        assert other.status == 200
        other.close()
        assert _wait_streams(node, 4)
        # The streams still work, and a freed slot returns to its address.
        r = node.api().request("POST", "/livePub", {"n": 1})
        assert r.status == 201
        assert all(s.wait_events(1) for s in direct + via)
        direct.pop().close()
        assert _wait_streams(node, 3)
        direct.append(node.stream(live_path("livePub")))
        assert direct[-1].status == 200, "a freed per-address slot was not given back"
    finally:
        for s in direct + via:
            s.close()
    assert _wait_streams(node, 0)


def test_slow_client_is_dropped_while_others_keep_up(limits):
    assert _wait_streams(limits, 0)
    slow = LiveStream(limits.port, live_path("livePub"), read=False, rcvbuf=4096)
    fast = limits.stream(live_path("livePub"))
    try:
        assert slow.status == 200
        before = metric(limits.port, "roost_live_slow_disconnects_total")
        api, pad, n = limits.api(), "y" * 8000, 600   # ~5 MB: more than the kernel's buffers hold
        ids = []
        for k in range(n):
            r = api.request("POST", "/livePub", {"k": k, "pad": pad})
            assert r.status == 201
            ids.append(r.json()["_id"])
            if k % 100 == 99 and metric(limits.port, "roost_live_slow_disconnects_total") > before:
                break
        assert fast.wait_events(len(ids), 20), (len(fast.events), len(ids), fast.end)
        assert [e.entity_id for e in fast.events] == ids and fast.end is None
        deadline = time.monotonic() + 5
        while metric(limits.port, "roost_live_slow_disconnects_total") <= before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert metric(limits.port, "roost_live_slow_disconnects_total") == before + 1
        assert _wait_streams(limits, 1)
        # The slow client's connection is gone: reading drains what was buffered, then EOF/reset.
        slow.sock.settimeout(5)
        total = 0
        try:
            while True:
                data = slow.sock.recv(1 << 20)
                if not data:
                    break
                total += len(data)
        except ConnectionResetError:
            pass
        assert total < len(ids) * len(pad), "the slow client was sent everything"
    finally:
        slow.close(), fast.close()


def test_fast_client_gets_a_burst_larger_than_the_buffer(limits):
    """A client that reads promptly is not 'slow' because one group commit (a
    /_batch of 10 writes, ~160 KB of events) is larger than live_buffer_bytes
    (64 KiB here): it gets every event and stays connected."""
    assert _wait_streams(limits, 0)
    fast = limits.stream(live_path("livePub"))
    ops = [{"method": "POST", "path": "/livePub", "body": {"k": k, "pad": "z" * 16000}} for k in range(10)]
    r = limits.api().request("POST", "/_batch", {"operations": ops})
    assert r.status == 200, r
    ok = fast.wait_events(10, 5)
    fast.close()
    assert ok and fast.end == "closed", f"the reading client was dropped ({fast.end}) after {len(fast.events)} events"
    assert [e.entity_id for e in fast.events] == [x["body"]["_id"] for x in r.json()["results"]]


def test_resume_with_a_backlog_larger_than_the_buffer_catches_up(limits):
    """A client that comes back after more than live_buffer_bytes of changes
    (here 20 writes of 8 KB, each its own commit, against 64 KiB) must get
    past them on resume: "it resumes with Last-Event-ID and loses nothing"."""
    assert _wait_streams(limits, 0)
    s = limits.stream(live_path("livePub"))
    api = limits.api()
    assert api.request("POST", "/livePub", {"mark": 1}).status == 201
    assert s.wait_events(1)
    s.close()
    ids = [api.request("POST", "/livePub", {"k": k, "pad": "z" * 8000}).json()["_id"] for k in range(20)]
    progress = []
    for attempt in range(3):   # an EventSource would retry forever
        resumed = limits.stream(live_path("livePub"), last_event_id=s.events[0].id)
        ok = resumed.wait_events(20, 3)
        resumed.close()
        progress.append((len(resumed.events), resumed.end))
        if ok:
            break
    assert ok, f"resuming before a 160 KB backlog never catches up: (events, end) per attempt {progress}"
    assert [e.entity_id for e in resumed.events] == ids
