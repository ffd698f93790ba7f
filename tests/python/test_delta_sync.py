"""Issue #15: the change feed, delta sync (`GET /:collection/_deltaset`) and
conditional writes (ETag, If-Match, If-None-Match).

 1. randomised convergence: four users make random creates, updates, deletes
    and `_acl` changes (granting and revoking each other) in a private and in
    a shared collection, while each user's clients (one unfiltered, one with a
    `query`) sync at random moments with random page sizes, sometimes
    stopping half-way or starting over. Every page is checked against a
    model of who could read what; at the end each replayed copy equals a
    fresh full list under that user's rights. Seeded: a failure names its seed
    (ROOST_DELTA_SEEDS=1,2,3 runs more seeds);
 2. pages under a concurrent writer (limit 5): nothing missed, no change
    repeated across pages;
 3. edge cases: listing, empty delta, `more`, bad cursors and limits, a
    cursor from another database or permission level, users, files, anonymous;
 4. ETag / If-Match / If-None-Match.

The kill -9 side of the feed is in tests/drills/crash.py (test_drills_quick).
"""

import base64
import collections
import json
import os
import random
import signal
import struct
import threading
import time
import urllib.parse
import uuid
import zlib

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, Roostd, cursors, running_roostd

CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: shared
files_permission: shared
collections:
  pubSync: {{permission: public}}
  prvSync: {{permission: private}}
  concSync: {{permission: shared}}
  prvEdge: {{permission: private}}
  shrEdge: {{permission: shared}}
  lvlEdge: {{permission: shared}}
  etagNotes: {{permission: shared}}
"""


# ---------------------------------------------------------------------------------------------
# Plumbing: users with unique names (the daemon and keep-alive clients are roost_harness's).

def new_user(node, name):
    """Signs up `name` plus a random suffix; returns (user _id, token)."""
    body = node.sign_up(f"{name}-{uuid.uuid4().hex[:6]}", email=f"{name}@example.com")
    return body["user"]["_id"], body["token"]


def q(value):
    return urllib.parse.quote(json.dumps(value, separators=(",", ":")))


def qid(entity_id):
    return urllib.parse.quote(entity_id, safe="")


def delta_path(coll, since=None, limit=None, query=None):
    params = {}
    if since is not None:
        params["since"] = since
    if limit is not None:
        params["limit"] = str(limit)
    if query is not None:
        params["query"] = json.dumps(query, separators=(",", ":"))
    return f"/{coll}/_deltaset" + ("?" + urllib.parse.urlencode(params) if params else "")


def error_code(resp):
    return resp.body.get("error") if isinstance(resp.body, dict) else None


def full_list(api, coll, query=None):
    path = f"/{coll}?limit=1000&sort={q({'_id': 1})}" + (f"&query={q(query)}" if query is not None else "")
    r = api.call("GET", path)
    assert r.status == 200, r
    assert len(r.body) < 1000, "the test's collections stay under one page"
    return {d["_id"]: d for d in r.body}


class SyncClient:
    """An offline client's replayed copy of one collection: applies `changed`
    as upserts and `deleted` as removals, page after page. `on_page` sees
    every page (the convergence test checks it against its model)."""

    def __init__(self, api, coll, query=None, name="", on_page=None):
        self.api, self.coll, self.query, self.name, self.on_page = api, coll, query, name, on_page
        self.copy, self.cursor = {}, None
        self.seen_at = {}            # since-mode: id -> last _updatedAt shown (a repeat must be newer)

    listing_open = False         # a first listing is being paged (its cursor continues it)

    def reset(self):
        self.copy, self.cursor, self.seen_at, self.listing_open = {}, None, {}, False

    def page(self, limit=None):
        listing = self.cursor is None or self.listing_open
        if self.cursor is None:
            self.seen_at = {}
        r = self.api.call("GET", delta_path(self.coll, self.cursor, limit, self.query))
        assert r.status == 200, (self.name, r)
        body = r.body
        assert set(body) == {"changed", "deleted", "cursor", "more"}, body
        assert r.header("X-Roost-Cursor") == body["cursor"], (r.headers, body["cursor"])
        changed = [d["_id"] for d in body["changed"]]
        deleted = [d["_id"] for d in body["deleted"]]
        assert all(set(d) == {"_id"} for d in body["deleted"]), body["deleted"]
        assert len(changed) == len(set(changed)) and len(deleted) == len(set(deleted)), (self.name, "repeat in a page", body)
        assert not set(changed) & set(deleted), (self.name, "an id both changed and deleted", body)
        if limit is not None:
            assert len(changed) + len(deleted) <= limit, (self.name, limit, body)
        if listing:
            assert deleted == [], (self.name, "a listing page with deletions", body)
        if self.on_page:
            self.on_page(self, body, listing)
        for d in body["changed"]:
            if not listing:
                # Since a cursor, an entity shows again only for a newer change.
                prev = self.seen_at.get(d["_id"])
                assert prev is None or d["_updatedAt"] > prev, \
                    (self.name, f"{d['_id']} shown again at {d['_updatedAt']} after {prev}: a change repeated across pages")
                self.seen_at[d["_id"]] = d["_updatedAt"]
            self.copy[d["_id"]] = d
        for i in deleted:
            self.copy.pop(i, None)
        self.cursor = body["cursor"]
        self.listing_open = listing and body["more"]
        return body

    def sync(self, limit=None, rng=None, max_pages=5000):
        """Pages until more=false (a fresh random limit per page when `rng` is given)."""
        for _ in range(max_pages):
            body = self.page(rng.choice(LIMITS) if rng else limit)
            if not body["more"]:
                return body
        pytest.fail(f"{self.name}: more=true after {max_pages} pages")


LIMITS = [1, 1, 2, 3, 5, 1000]


# ---------------------------------------------------------------------------------------------
# Fixtures

@pytest.fixture(scope="module")
def node():
    with running_roostd(CONFIG) as n:
        cursors.register(n.data_dir)   # cursors are sealed: the checks open them with its key
        yield n


@pytest.fixture(scope="module")
def people(node):
    """Three signed-in users: {name: (id, token)}."""
    return {name: new_user(node, name) for name in ("ann", "ben", "cat")}


# ---------------------------------------------------------------------------------------------
# 1. Randomised convergence

# Filters a client may sync with, and the same test in Python.
QUERIES = [
    ({"n": {"$lt": 5}}, lambda d: isinstance(d.get("n"), int) and d["n"] < 5),
    ({"tag": {"$in": ["red", "blue"]}}, lambda d: d.get("tag") in ("red", "blue")),
    ({"$or": [{"n": {"$gte": 7}}, {"tag": "green"}]}, lambda d: d.get("n", -1) >= 7 or d.get("tag") == "green"),
]
TAGS = ["red", "green", "blue"]


class World:
    """The ground truth of a sequential run: every entity as the server last
    answered it, and every user who could ever read it."""

    def __init__(self, private, users):
        self.private, self.users = private, users
        self.entities = {}
        self.ever = collections.defaultdict(set)

    def readers(self, doc):
        if not self.private:
            return set(self.users)
        acl = doc.get("_acl", {})
        return {acl.get("creator")} | set(acl.get("read", [])) | set(acl.get("write", []))

    def writers(self, doc):
        acl = doc.get("_acl", {})
        return {acl.get("creator")} | set(acl.get("write", []))

    def stored(self, doc):
        self.entities[doc["_id"]] = doc
        self.ever[doc["_id"]] |= self.readers(doc)

    def visible(self, user, match):
        return {i: d for i, d in self.entities.items() if user in self.readers(d) and match(d)}


def _seeds(default):
    text = os.environ.get("ROOST_DELTA_SEEDS")
    return [int(s) for s in text.split(",")] if text else [default]


@pytest.mark.parametrize("level,seed", [("private", s) for s in _seeds(1501)] + [("shared", s) for s in _seeds(2602)])
def test_random_convergence(node, level, seed):
    """prvSync is shared by every private run (other runs' rows are invisible
    extras there); each shared run gets a collection of its own."""
    rng = random.Random(seed)
    private = level == "private"
    coll = "prvSync" if private else f"shrSync{seed}x{uuid.uuid4().hex[:4]}"
    users = [new_user(node, f"u{k}") for k in range(4)]
    ids = [u for u, _ in users]
    tokens = dict(users)
    world = World(private, ids)
    writer_api = {u: node.api(t) for u, t in users}
    where = f"[{coll} seed {seed}]"
    problems = []

    def check_page(client, body, listing):
        user, match = client.user, client.match
        for d in body["changed"]:
            i = d["_id"]
            if user not in world.ever.get(i, set()):
                problems.append(f"{client.name}: got {i} in changed but never could read it")
            elif user not in world.readers(world.entities.get(i, {})):
                problems.append(f"{client.name}: got {i} in changed but cannot read it now")
            elif d != world.entities[i]:
                problems.append(f"{client.name}: {i} is not the current version: {d} vs {world.entities[i]}")
            elif not match(d):
                problems.append(f"{client.name}: {i} in changed does not match {client.query}")
        for d in body["deleted"]:
            i = d["_id"]
            if user not in world.ever.get(i, set()):
                problems.append(f"{client.name}: learned of {i} in deleted but never could read it")
            cur = world.entities.get(i)
            if cur is not None and user in world.readers(cur) and match(cur):
                problems.append(f"{client.name}: {i} in deleted but readable and matching now")
        assert not problems, f"{where} " + "; ".join(problems[:5])

    clients = []
    for u, t in users:
        for query, match in [(None, lambda d: True), rng.choice(QUERIES)]:
            c = SyncClient(node.api(t), coll, query, name=f"{u[-4:]}{'' if query is None else json.dumps(query)}",
                           on_page=check_page)
            c.user, c.match = u, match
            clients.append(c)

    def others(me):
        return [u for u in ids if u != me]

    counts = collections.Counter()
    for step in range(240):
        actor = rng.choice(ids)
        api = writer_api[actor]
        mine = [i for i, d in world.entities.items() if actor in world.writers(d)]
        r = rng.random()
        if r < 0.3 or not mine:
            kind = "create"
            doc = {"_id": f"{actor}:e{step}", "n": rng.randrange(10), "tag": rng.choice(TAGS)}
            if private:
                doc["_acl"] = {"read": [u for u in others(actor) if rng.random() < 0.4]}
                if rng.random() < 0.15:
                    doc["_acl"]["write"] = [rng.choice(others(actor))]
            resp = api.call("POST", f"/{coll}", doc)
            assert resp.status == 201, (where, resp)
            world.stored(resp.body)
        elif r < 0.6:
            kind = "update"
            target = rng.choice(mine)
            patch = {k: v for k, v in (("n", rng.randrange(10)), ("tag", rng.choice(TAGS))) if rng.random() < 0.7}
            patch["step"] = step
            resp = api.call("PATCH", f"/{coll}/{qid(target)}", patch)
            assert resp.status == 200, (where, resp)
            world.stored(resp.body)
        elif r < 0.85:
            kind = "acl"
            target = rng.choice(mine)
            acl = {"read": [u for u in ids if rng.random() < 0.4]}
            if rng.random() < 0.1:
                acl["write"] = [u for u in ids if rng.random() < 0.2]
            resp = api.call("PATCH", f"/{coll}/{qid(target)}", {"_acl": acl, "step": step})
            assert resp.status == 200, (where, resp)
            world.stored(resp.body)
        else:
            kind = "delete"
            target = rng.choice(mine)
            resp = api.call("DELETE", f"/{coll}/{qid(target)}")
            assert resp.status == 200, (where, resp)
            del world.entities[target]
        counts[kind] += 1
        # Clients sync at random moments: to the end, a few pages only, or from scratch.
        while rng.random() < 0.35:
            c = rng.choice(clients)
            mode = rng.random()
            if mode < 0.04:
                c.reset()
            if mode < 0.7:
                c.sync(rng=rng)
            else:
                for _ in range(rng.randint(1, 3)):
                    if not c.page(rng.choice(LIMITS))["more"]:
                        break
            counts["syncs"] += 1
    assert counts["acl"] > 20 and counts["delete"] > 10, counts

    for c in clients:
        c.sync(rng=rng)
        truth = full_list(node.api(tokens[c.user]), coll, c.query)
        assert truth == world.visible(c.user, c.match), f"{where} the model disagrees with the full list"
        missing = sorted(set(truth) - set(c.copy))
        extra = sorted(set(c.copy) - set(truth))
        stale = sorted(i for i in set(truth) & set(c.copy) if truth[i] != c.copy[i])
        assert not (missing or extra or stale), \
            f"{where} client {c.name}: missing {missing[:5]}, kept {extra[:5]} (no longer visible), stale {stale[:5]}"


def test_revoked_entity_changed_again_is_deleted_across_pages(node, people):
    """Found by the convergence test (private, limit 1). X is readable by Ben at his
    cursor; Ann revokes him on X, then changes Y, then changes X again. Paging with
    limit=1 gives Y (the page's cursor moves to Y's change), then judges X by the ACL
    before its first change *after that cursor* (already without Ben): X is left out,
    and Ben's copy keeps X forever. One page (limit 1000) answers deleted=[X]."""
    (ann, ann_t), (ben, ben_t) = people["ann"], people["ben"]
    api = node.api(ann_t)
    x, y = f"{ann}:rev-x-{uuid.uuid4().hex[:6]}", f"{ann}:rev-y-{uuid.uuid4().hex[:6]}"
    for i in (x, y):
        assert api.call("POST", "/prvEdge", {"_id": i, "v": 0, "_acl": {"read": [ben]}}).status == 201
    results = {}
    for limit in (1000, 1):
        client = SyncClient(node.api(ben_t), "prvEdge", name=f"ben limit {limit}")
        client.sync(limit=1000)
        assert x in client.copy and y in client.copy
        results[limit] = client
    assert api.call("PATCH", f"/prvEdge/{qid(x)}", {"_acl": {"read": []}}).status == 200   # revoke Ben
    assert api.call("PATCH", f"/prvEdge/{qid(y)}", {"v": 1}).status == 200
    assert api.call("PATCH", f"/prvEdge/{qid(x)}", {"v": 2}).status == 200
    for limit, client in results.items():
        client.sync(limit=limit)
    assert x not in results[1000].copy
    assert x not in results[1].copy, "paged by 1: the revoked entity was never reported deleted"


def test_entity_created_during_a_paged_listing_then_deleted_is_deleted(node, people):
    """Found by the convergence test. A listing paged by 1 is pinned to the position
    where it started; X, created after that position but before the listing reached
    its row, is listed. Then X is deleted: the delta since the final listing cursor
    treats X as "created after the cursor" (its first change there is the create,
    with no previous ACL) and leaves it out, so the client keeps X forever."""
    api = node.api(people["ann"][1])
    coll = f"lst{uuid.uuid4().hex[:6]}"
    for i in ("a", "b"):
        assert api.call("POST", f"/{coll}", {"_id": i}).status == 201
    client = SyncClient(node.api(people["ann"][1]), coll, name="lister")
    assert client.page(1)["more"] is True
    assert api.call("POST", f"/{coll}", {"_id": "x"}).status == 201
    client.sync(limit=1)
    assert set(client.copy) == {"a", "b", "x"}
    assert api.call("DELETE", f"/{coll}/x").status == 200
    client.sync()
    assert set(client.copy) == set(full_list(api, coll)) == {"a", "b"}, "x was listed, then deleted, and never reported"


# ---------------------------------------------------------------------------------------------
# 2. Pages under concurrent writes

def test_pages_under_a_concurrent_writer_miss_nothing(node, people):
    _, token = people["cat"]
    writer = node.api(token)
    stop = threading.Event()
    errors, written = [], []

    def write():
        rng = random.Random(77)
        live = []
        try:
            for k in range(300):
                r = rng.random()
                if r < 0.45 or not live:
                    resp = writer.call("POST", "/concSync", {"_id": f"w{k}", "n": rng.randrange(10), "k": k})
                    if resp.status == 201:
                        live.append(resp.body["_id"])
                elif r < 0.9:
                    resp = writer.call("PATCH", f"/concSync/{rng.choice(live)}", {"n": rng.randrange(10), "k": k})
                else:
                    victim = live.pop(rng.randrange(len(live)))
                    resp = writer.call("DELETE", f"/concSync/{victim}")
                if resp.status not in (200, 201):
                    errors.append(resp)
                written.append(k)
        finally:
            stop.set()

    # Some rows exist before the first listing page, so that the listing itself is paged under writes.
    for k in range(12):
        assert writer.call("POST", "/concSync", {"_id": f"pre{k}", "n": k % 10}).status == 201
    readers = [SyncClient(node.api(token), "concSync", name="plain"),
               SyncClient(node.api(token), "concSync", query={"n": {"$lt": 5}}, name="n<5")]
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    pages = 0
    deadline = time.monotonic() + 30
    while not stop.is_set() and time.monotonic() < deadline:
        for c in readers:
            if not c.page(5)["more"]:
                time.sleep(0.002)
            pages += 1
    thread.join(timeout=30)
    assert not thread.is_alive() and not errors, errors[:3]
    for c in readers:
        c.sync(limit=5)
        truth = full_list(node.api(token), "concSync", c.query)
        missing = sorted(set(truth) - set(c.copy))
        extra = sorted(set(c.copy) - set(truth))
        stale = sorted(i for i in set(truth) & set(c.copy) if truth[i] != c.copy[i])
        assert not (missing or extra or stale), f"{c.name}: missing {missing[:5]}, extra {extra[:5]}, stale {stale[:5]}"
    assert pages > 20 and len(written) == 300


# ---------------------------------------------------------------------------------------------
# 3. Edge cases

def test_listing_then_empty_delta_then_more(node, people):
    _, token = people["ann"]
    api = node.api(token)
    coll = f"list{uuid.uuid4().hex[:6]}"
    made = [api.call("POST", f"/{coll}", {"_id": f"d{k}", "k": k}).body for k in range(5)]
    r = api.call("GET", delta_path(coll))
    assert r.status == 200 and r.header("Cache-Control") == "no-store", r
    assert r.body["changed"] == made and r.body["deleted"] == [] and r.body["more"] is False
    assert r.header("X-Roost-Cursor") == r.body["cursor"]
    cursor = r.body["cursor"]
    # An empty delta: nothing, more=false, a cursor that still syncs.
    r = api.call("GET", delta_path(coll, cursor))
    assert (r.status, r.body["changed"], r.body["deleted"], r.body["more"]) == (200, [], [], False), r
    assert api.call("GET", delta_path(coll, r.body["cursor"])).body["changed"] == []
    # `more`: pages of 2 over 5 listed rows: 2, 2, 1; the last page says more=false (no empty page after it).
    sizes, c = [], None
    for _ in range(10):
        b = api.call("GET", delta_path(coll, c, limit=2)).body
        sizes.append((len(b["changed"]), b["more"]))
        c = b["cursor"]
        if not b["more"]:
            break
    assert sizes == [(2, True), (2, True), (1, False)], sizes
    # The final listing cursor syncs from where the listing started: nothing new yet.
    assert api.call("GET", delta_path(coll, c)).body["changed"] == []
    # Since a cursor: 4 changes, limit 2: exactly two full pages.
    for k in range(4):
        api.call("PATCH", f"/{coll}/d{k}", {"x": k})
    pages = []
    for _ in range(5):
        b = api.call("GET", delta_path(coll, c, limit=2)).body
        pages.append(([d["_id"] for d in b["changed"]], b["more"]))
        c = b["cursor"]
        if not b["more"]:
            break
    assert pages == [(["d0", "d1"], True), (["d2", "d3"], False)], pages
    # An entity changed twice after the cursor shows once, at its latest change.
    api.call("PATCH", f"/{coll}/d0", {"x": 10})
    api.call("PATCH", f"/{coll}/d4", {"x": 11})
    api.call("PATCH", f"/{coll}/d0", {"x": 12})
    b = api.call("GET", delta_path(coll, c)).body
    assert [(d["_id"], d.get("x")) for d in b["changed"]] == [("d4", 11), ("d0", 12)], b
    # Created after the cursor and deleted again: nowhere. Deleted after the cursor: in deleted.
    c = b["cursor"]
    api.call("POST", f"/{coll}", {"_id": "tmp"})
    api.call("DELETE", f"/{coll}/tmp")
    api.call("DELETE", f"/{coll}/d1")
    b = api.call("GET", delta_path(coll, c)).body
    assert (b["changed"], b["deleted"]) == ([], [{"_id": "d1"}]), b
    # A collection nobody wrote yet: an empty listing and a cursor.
    b = api.call("GET", delta_path(f"never{uuid.uuid4().hex[:6]}")).body
    assert (b["changed"], b["deleted"], b["more"]) == ([], [], False) and b["cursor"]


def _forged(cursor, **change):
    """The cursor with its sealed fields changed, sealed again with the database's own key:
    what the server does with a well-sealed but wrong cursor."""
    return cursors.reseal(cursor, **change)


def _flipped(cursor, at):
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[at % len(raw)] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def _unsealed(cursor):
    """The cursor as roostd before 0.3 made it: readable base64url text."""
    f = cursors.open_cursor(cursor)
    text = "|".join(["r1", f["epoch"], f["level"], str(int(f["seq"])), "-", "-"])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize("since,status,code", [
    ("garbage!", 400, "InvalidCursor"),
    ("%%%", 400, "InvalidCursor"),
    ("AAAA", 400, "InvalidCursor"),
    ("x" * 400, 400, "InvalidCursor"),
    (lambda c: _flipped(c, 0), 400, "InvalidCursor"),                    # the version byte
    (lambda c: c[:52], 400, "InvalidCursor"),                            # too short to hold a nonce and a tag
    (lambda c: _forged(c, seq="x1"), 400, "InvalidCursor"),
    (lambda c: _forged(c, seq="-1"), 400, "InvalidCursor"),
    (lambda c: _forged(c, version="r0"), 400, "InvalidCursor"),
    (lambda c: _forged(c, seq="999999999"), 410, "CursorExpired"),       # a position never handed out
    (lambda c: _forged(c, epoch="0123456789abcdef"), 410, "CursorExpired"),
    (lambda c: _forged(c, level="public"), 410, "CursorExpired"),
    (lambda c: _flipped(c, 1), 410, "CursorExpired"),                    # the nonce
    (lambda c: _flipped(c, 30), 410, "CursorExpired"),                   # the tag
    (lambda c: _flipped(c, 60), 410, "CursorExpired"),                   # the sealed text
    (lambda c: _flipped(c, -1), 410, "CursorExpired"),
    (_unsealed, 410, "CursorExpired"),                                   # an older roostd's readable cursor
])
def test_bad_cursors(node, people, since, status, code):
    api = node.api(people["ann"][1])
    good = api.call("GET", delta_path("shrEdge")).body["cursor"]
    value = since(good) if callable(since) else since
    r = api.call("GET", f"/shrEdge/_deltaset?since={urllib.parse.quote(value, safe='')}")
    assert (r.status, error_code(r)) == (status, code), r


def test_cursors_are_sealed(node, people):
    """A cursor tells its holder nothing: the same position seals differently every time, its
    length does not follow the feed position, and its bytes hold no readable field. The
    database's key opens it to this collection, level and the feed's head."""
    api = node.api(people["ann"][1])
    first = api.call("GET", delta_path("shrEdge")).body["cursor"]
    again = api.call("GET", delta_path("shrEdge")).body["cursor"]
    assert first != again
    a, b = cursors.open_cursor(first), cursors.open_cursor(again)
    assert a is not None and (a["level"], a["epoch"], a["seq"]) == (b["level"], b["epoch"], b["seq"]) == (
        "shared@shrEdge", a["epoch"], a["seq"]), (a, b)
    raw = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
    assert b"shrEdge" not in raw and a["epoch"].encode() not in raw and b"|" not in raw[:3]
    lengths = {len(first), len(again)}
    for n in range(30):                  # the feed moves on (other collections too): same length
        assert api.call("POST", "/concSync" if n % 2 else "/shrEdge", {"n": n}).status == 201
        lengths.add(len(api.call("GET", delta_path("shrEdge", first)).body["cursor"]))
    assert len(lengths) == 1, lengths
    # Each delta hands out a new cursor, and an empty delta still works (and is empty).
    head = api.call("GET", delta_path("shrEdge", first)).body["cursor"]
    again = api.call("GET", delta_path("shrEdge", head))
    assert again.status == 200 and (again.body["changed"], again.body["deleted"], again.body["more"]) == ([], [], False)
    assert cursors.cursor_seq(again.body["cursor"]) == cursors.cursor_seq(head) > cursors.cursor_seq(first)


@pytest.mark.parametrize("limit,status", [("0", 400), ("10001", 400), ("-1", 400), ("abc", 400), ("1.5", 400),
                                          ("", 400), ("1", 200), ("10000", 200)])
def test_limit_bounds(node, people, limit, status):
    r = node.api(people["ann"][1]).call("GET", f"/shrEdge/_deltaset?limit={limit}")
    assert r.status == status, r
    if status == 400:
        assert error_code(r) == "InvalidQuery", r


@pytest.mark.parametrize("path,status", [("/shrEdge/_deltaset", 401), ("/prvEdge/_deltaset", 401),
                                         ("/users/_deltaset", 401), ("/files/_deltaset", 401),
                                         ("/pubSync/_deltaset", 200)])
def test_anonymous(node, path, status):
    r = node.api().call("GET", path)
    assert r.status == status, r


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_deltaset_is_get_only(node, people, method):
    r = node.api(people["ann"][1]).call(method, "/shrEdge/_deltaset", {})
    assert r.status == 405 and "GET" in (r.header("Allow") or ""), r


def test_cursor_from_another_database_is_gone(node, people):
    api = node.api(people["ann"][1])
    ours = api.call("GET", delta_path("shrEdge")).body["cursor"]
    with running_roostd(CONFIG) as other:
        _, token = new_user(other, "zed")
        oapi = other.api(token)
        assert oapi.call("POST", "/shrEdge", {"a": 1}).status == 201
        theirs = oapi.call("GET", delta_path("shrEdge")).body["cursor"]
        r = oapi.call("GET", delta_path("shrEdge", ours))
        assert (r.status, error_code(r)) == (410, "CursorExpired"), r
    r = api.call("GET", delta_path("shrEdge", theirs))
    assert (r.status, error_code(r)) == (410, "CursorExpired"), r


@pytest.mark.parametrize("how", ["restart", "sighup"])
def test_permission_level_change_expires_cursors(tmp_path, how):
    config = FAST_HASHING + "collections:\n  lvl: {permission: shared}\n"
    node = Roostd(tmp_path, config).start()
    try:
        uid, token = new_user(node, "lev")
        api = node.api(token)
        assert api.call("POST", "/lvl", {"_id": f"{uid}:a"}).status == 201
        cursor = api.call("GET", delta_path("lvl")).body["cursor"]
        assert api.call("POST", "/lvl", {"_id": f"{uid}:b"}).status == 201
        # Same level: the cursor survives a restart (the epoch is in the database).
        node.stop()
        node.start()
        api = node.api(token)
        r = api.call("GET", delta_path("lvl", cursor))
        assert r.status == 200 and [d["_id"] for d in r.body["changed"]] == [f"{uid}:b"], r
        node.config_path.write_text(config.replace("shared", "private"))
        if how == "restart":
            node.stop()
            node.start()
            api = node.api(token)
        else:
            node.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while True:
            r = api.call("GET", delta_path("lvl", cursor))
            if r.status != 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert (r.status, error_code(r)) == (410, "CursorExpired"), r
        # Starting over works, under the new level.
        fresh = api.call("GET", delta_path("lvl"))
        assert fresh.status == 200 and {d["_id"] for d in fresh.body["changed"]} == {f"{uid}:a", f"{uid}:b"}
        assert api.call("GET", delta_path("lvl", fresh.body["cursor"])).status == 200
    finally:
        node.stop()


def test_users_deltaset_is_the_public_view_with_deletions(node):
    me, my_token = new_user(node, "viewer")
    gone, gone_token = new_user(node, "leaver")
    other, other_token = new_user(node, "stayer")
    client = SyncClient(node.api(my_token), "users", name="viewer")
    client.sync(limit=2)
    assert {me, gone, other} <= set(client.copy)
    assert client.copy[me].get("email") == "viewer@example.com"           # my own record: all of it
    assert all("email" not in u for i, u in client.copy.items() if i != me), "another user's email in the feed"
    assert node.api(other_token).call("PATCH", f"/users/{other}", {"nick": "s"}).status == 200
    assert node.api(gone_token).call("DELETE", f"/users/{gone}").status == 200
    body = client.page()
    assert {"_id": gone} in body["deleted"], body
    changed = {d["_id"]: d for d in body["changed"]}
    assert changed[other].get("nick") == "s" and "email" not in changed[other], body
    assert client.copy == full_list(node.api(my_token), "users")
    # Queries on the private field are refused here as on the list.
    r = node.api(my_token).call("GET", delta_path("users", query={"email": "stayer@example.com"}))
    assert r.status == 400, r


def png(width, height, seed):
    raw = b"".join(b"\x00" + bytes(((x * 7 + y * seed + c * 50) & 0xFF) for x in range(width) for c in range(3))
                   for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_files_deltaset_shows_an_upload_and_its_deletion(node, people):
    _, token = people["ben"]
    api = node.api(token)
    client = SyncClient(node.api(token), "files", name="files")
    client.sync()
    r = api.call("POST", "/files", raw_body=png(16, 12, 5), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    fid = r.body["_id"]
    client.sync(limit=1)
    assert fid in client.copy and client.copy[fid]["sha256"] == r.body["sha256"], client.copy.get(fid)
    assert api.call("DELETE", f"/files/{fid}").status == 200
    body = client.sync(limit=1)
    assert fid not in client.copy, body
    fresh = SyncClient(node.api(token), "files")
    fresh.sync()
    assert fid not in fresh.copy and set(fresh.copy) == set(client.copy)


# ---------------------------------------------------------------------------------------------
# 4. ETag, If-Match, If-None-Match

def etag_of(resp):
    return f'"{resp.body["_updatedAt"]}"'


def test_every_entity_response_has_its_etag(node, people):
    api = node.api(people["ann"][1])
    base = f"/etagNotes/e{uuid.uuid4().hex[:8]}"
    responses = [
        ("POST", api.call("POST", "/etagNotes", {"_id": base.rsplit("/", 1)[1], "a": 1})),
        ("GET", api.call("GET", base)),
        ("PUT existing", api.call("PUT", base, {"a": 2})),
        ("PATCH", api.call("PATCH", base, {"b": 3})),
        ("PUT new", api.call("PUT", base + "x", {"a": 1})),
    ]
    problems = [(what, r.status, r.header("ETag"), r.body.get("_updatedAt")) for what, r in responses
                if r.status not in (200, 201) or r.header("ETag") != etag_of(r)]
    assert problems == [], problems
    # A copy from a delta carries the same _updatedAt as the ETag of a GET.
    delta = {d["_id"]: d for d in api.call("GET", delta_path("etagNotes")).body["changed"]}
    assert f'"{delta[base.rsplit("/", 1)[1]]["_updatedAt"]}"' == api.call("GET", base).header("ETag")


@pytest.mark.parametrize("method,body", [("PUT", {"a": 9}), ("PATCH", {"a": 9}), ("DELETE", None)])
def test_if_match(node, people, method, body):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/m{uuid.uuid4().hex[:8]}"
    first = api.call("PUT", path, {"a": 1})
    assert first.status == 201
    current = api.call("PATCH", path, {"a": 2})
    stale, tag = first.header("ETag"), current.header("ETag")
    assert stale != tag
    for header in (stale, '"nope"', f"W/{tag}"):
        r = api.call(method, path, body, headers={"If-Match": header})
        assert (r.status, error_code(r), r.header("ETag")) == (412, "PreconditionFailed", tag), (header, r)
    after = api.call("GET", path)
    assert after.status == 200 and after.body == current.body, "a refused write changed the entity"
    r = api.call(method, path, body, headers={"If-Match": f'"x", {tag}'})
    assert r.status == 200, r
    if method != "DELETE":
        assert r.header("ETag") != tag and r.header("ETag") == etag_of(r)
        assert api.call(method, path, body, headers={"If-Match": "*"}).status == 200
    else:
        assert api.call("GET", path).status == 404
        assert api.call("DELETE", path, headers={"If-Match": "*"}).status == 404


def test_if_none_match_star_only_creates(node, people):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/n{uuid.uuid4().hex[:8]}"
    created = api.call("PUT", path, {"a": 1}, headers={"If-None-Match": "*"})
    assert created.status == 201 and created.header("ETag") == etag_of(created), created
    again = api.call("PUT", path, {"a": 2}, headers={"If-None-Match": "*"})
    assert (again.status, error_code(again), again.header("ETag")) == (412, "PreconditionFailed", created.header("ETag"))
    assert api.call("GET", path).body == created.body
    # If-Match on an id that does not exist: nothing to match, so 412 and nothing created.
    missing = f"/etagNotes/none{uuid.uuid4().hex[:8]}"
    r = api.call("PUT", missing, {"a": 1}, headers={"If-Match": created.header("ETag")})
    assert r.status == 412 and api.call("GET", missing).status == 404, r


def test_rapid_patches_get_distinct_increasing_etags(node, people):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/r{uuid.uuid4().hex[:8]}"
    tags = [api.call("PUT", path, {"i": -1}).header("ETag")]
    for i in range(25):
        r = api.call("PATCH", path, {"i": i})
        assert r.status == 200
        tags.append(r.header("ETag"))
    assert len(set(tags)) == len(tags) and tags == sorted(tags), tags


def test_etags_on_other_entity_responses(node, people):
    """Issue #15: every entity response carries an ETag, and PUT/PATCH/DELETE honour
    If-Match, the member directory and a GET with ?resolve= included."""
    api = node.api(people["ann"][1])
    path = f"/etagNotes/res{uuid.uuid4().hex[:8]}"
    assert api.call("PUT", path, {"a": 1}).status == 201
    uid, token = new_user(node, "tagged")
    uapi = node.api(token)
    me = uapi.call("GET", "/users/me")
    responses = [("GET ?resolve=a", api.call("GET", path + "?resolve=a")), ("GET /users/me", me),
                 ("PATCH /users/:id", uapi.call("PATCH", f"/users/{uid}", {"nick": "a"}))]
    missing = [what for what, r in responses if r.status != 200 or r.header("ETag") != etag_of(r)]
    stale = uapi.call("PATCH", f"/users/{uid}", {"nick": "b"}, headers={"If-Match": etag_of(me)})
    assert missing == [] and stale.status == 412, (missing, stale)


def test_user_and_file_responses_carry_the_stored_etag(node, people):
    uid, token = new_user(node, "etagged")
    uapi, other = node.api(token), node.api(people["ben"][1])
    put = uapi.call("PUT", f"/users/{uid}", {"nick": "p"})
    responses = [("GET /users/:id (self)", uapi.call("GET", f"/users/{uid}")),
                 ("GET /users/:id (other)", other.call("GET", f"/users/{uid}")),
                 ("PUT /users/:id", put)]
    r = uapi.call("POST", "/files", raw_body=png(8, 6, 3), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    responses.append(("GET /files/:id/meta", uapi.call("GET", f"/files/{r.body['_id']}/meta")))
    wrong = [(what, r.status, r.header("ETag")) for what, r in responses if r.status != 200 or r.header("ETag") != etag_of(r)]
    assert wrong == [], wrong
    assert responses[0][1].header("ETag") == responses[1][1].header("ETag") == put.header("ETag")


def test_resolve_etag_is_the_entitys_own(node, people):
    """A resolved GET is another view of the same entity: its ETag is the entity's,
    not that of a referenced document written later."""
    api = node.api(people["ann"][1])
    ref, path = f"ref{uuid.uuid4().hex[:8]}", f"/etagNotes/own{uuid.uuid4().hex[:8]}"
    assert api.call("PUT", f"/etagNotes/{ref}", {"x": 1}).status == 201
    stored = api.call("PUT", path, {"link": {"_type": "ref", "_collection": "etagNotes", "_id": ref}})
    assert api.call("PATCH", f"/etagNotes/{ref}", {"x": 2}).status == 200
    resolved = api.call("GET", path + "?resolve=link")
    assert resolved.status == 200 and resolved.body["link"]["x"] == 2, resolved
    assert resolved.header("ETag") == stored.header("ETag") == etag_of(resolved), resolved


@pytest.mark.parametrize("method,body", [("PUT", {"nick": "z"}), ("PATCH", {"nick": "z"}), ("DELETE", None)])
def test_if_match_on_users(node, method, body):
    uid, token = new_user(node, "cond")
    api = node.api(token)
    path = f"/users/{uid}"
    first = api.call("GET", path)
    current = api.call("PATCH", path, {"nick": "y"})
    stale, tag = first.header("ETag"), current.header("ETag")
    assert stale and tag and stale != tag
    for headers in ({"If-Match": stale}, {"If-Match": '"nope"'}, {"If-None-Match": tag}, {"If-None-Match": "*"}):
        r = api.call(method, path, body, headers=headers)
        assert (r.status, error_code(r), r.header("ETag")) == (412, "PreconditionFailed", tag), (headers, r)
    after = api.call("GET", path)
    assert after.status == 200 and after.body == current.body, "a refused write changed the user"
    r = api.call(method, path, body, headers={"If-Match": f'"x", {tag}', "If-None-Match": stale})
    assert r.status == 200, r
    if method == "DELETE":
        assert node.api(ADMIN_TOKEN).call("GET", path).status == 404
    else:
        assert r.header("ETag") == etag_of(r) != tag and r.body["nick"] == "z"


def test_stale_if_match_refuses_a_password_change(node):
    uid, token = new_user(node, "pwcond")
    api = node.api(token)
    stale = api.call("GET", f"/users/{uid}").header("ETag")
    assert api.call("PATCH", f"/users/{uid}", {"nick": "n"}).status == 200
    r = api.call("PATCH", f"/users/{uid}", {"password": "another horse battery", "oldPassword": "correct horse battery"},
                 headers={"If-Match": stale})
    assert r.status == 412 and error_code(r) == "PreconditionFailed", r
    # Not changed: the session still works and the old password still signs in.
    assert api.call("GET", "/users/me").status == 200
    name = api.call("GET", "/users/me").body["username"]
    assert node.api().call("POST", "/login", {"username": name, "password": "correct horse battery"}).status == 200
