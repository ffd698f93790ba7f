"""Shared by the delta-sync tests (test_delta_sync*.py): the daemon's configuration, users,
the paths and a syncing client, the module-scoped `node` and `people` fixtures, and the
ground truth of the randomised convergence runs."""

import collections
import json
import os
import urllib.parse
import zlib

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, cursors, json_query as q, png_from_chunks, running_roostd


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
# Plumbing: paths and a syncing client (the daemon, its users and keep-alive clients are roost_harness's).

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
    return {name: node.new_user(name) for name in ("ann", "ben", "cat")}


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


def png(width, height, seed):
    """A PNG of its own pattern (not roost_harness.png's), so its bytes and hashes stay as they were."""
    raw = b"".join(b"\x00" + bytes(((x * 7 + y * seed + c * 50) & 0xFF) for x in range(width) for c in range(3))
                   for y in range(height))
    return png_from_chunks(width, height, zlib.compress(raw))
