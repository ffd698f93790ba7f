"""Access matrix: one roostd with a collection per permission level, four
principals (anonymous, user A, user B, admin), and every collection endpoint.

Each (level, principal, endpoint) asserts the status and exactly which row ids
come back or are counted. The expectations are written out as tables below,
straight from the access rules:

* public   — anyone reads and writes; anonymous rows have creator null.
* shared   — signed-in users read everything; create by any signed-in user;
             update/delete by the creator or users in _acl.write (others 403).
* private  — only the creator and users in _acl.read/_acl.write see a row
             (others: excluded from list/count, 404 on get/put/patch/delete);
             writes by the creator and _acl.write.
* readonly — signed-in users read; only the admin writes (users 403).
* anonymous on a non-public collection: 401. Admin: everything.
"""

import json
import sqlite3
import time
import urllib.parse
import uuid

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, running_roostd

LEVELS = ["public", "shared", "private", "readonly"]
COLLECTION = {"public": "pubPlaces", "shared": "sharedPlaces", "private": "privPlaces", "readonly": "roPlaces"}
PRINCIPALS = ["anon", "A", "B", "admin"]

# Two collections have indexes (geo and value), two do not: the ACL predicate
# must combine with both the index and the JSON-scan code paths.
CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: public
collections:
  pubPlaces:
    permission: public
    indexes: ["location:geo", tag]
  sharedPlaces:
    permission: shared
  privPlaces:
    permission: private
    indexes: ["location:geo", tag]
  roPlaces:
    permission: readonly
"""

IN_BOX = [5.0, 5.0]
OUT_OF_BOX = [50.0, 50.0]
BOX_QUERY = {"location": {"$geoWithin": {"$box": [[0, 0], [10, 10]]}}}
TAG_QUERY = {"tag": "x"}

# Seed rows: id -> (creator, ACL lists naming principals, location, tag).
ROWS = {
    "a1": ("A", {}, IN_BOX, "x"),
    "a2": ("A", {"read": ["B"]}, OUT_OF_BOX, "y"),
    "a3": ("A", {"write": ["B"]}, IN_BOX, "x"),
    "b1": ("B", {}, IN_BOX, "y"),
    "b2": ("B", {"read": ["A"]}, OUT_OF_BOX, "x"),
    "m1": ("admin", {}, IN_BOX, "x"),
    "m2": ("admin", {"read": ["A"]}, OUT_OF_BOX, "y"),
    "m3": ("admin", {"write": ["B"], "read": ["A"]}, IN_BOX, "y"),
    "n1": ("anon", {}, IN_BOX, "x"),
}

# Which rows each level holds (who may create where).
SEEDED = {
    "public": ["a1", "a2", "a3", "b1", "b2", "m1", "m2", "m3", "n1"],
    "shared": ["a1", "a2", "a3", "b1", "b2", "m1", "m2", "m3"],
    "private": ["a1", "a2", "a3", "b1", "b2", "m1", "m2", "m3"],
    "readonly": ["m1", "m2", "m3"],
}

# Rows each principal sees; 401 means the collection refuses the caller outright.
VISIBLE = {
    "public": {p: SEEDED["public"] for p in PRINCIPALS},
    "shared": {"anon": 401, "A": SEEDED["shared"], "B": SEEDED["shared"], "admin": SEEDED["shared"]},
    "private": {
        "anon": 401,
        "A": ["a1", "a2", "a3", "b2", "m2", "m3"],
        "B": ["a2", "a3", "b1", "b2", "m3"],
        "admin": SEEDED["private"],
    },
    "readonly": {"anon": 401, "A": SEEDED["readonly"], "B": SEEDED["readonly"], "admin": SEEDED["readonly"]},
}

# Rows each principal may update and delete.
WRITABLE = {
    "public": {p: SEEDED["public"] for p in PRINCIPALS},
    "shared": {"anon": [], "A": ["a1", "a2", "a3"], "B": ["a3", "b1", "b2", "m3"], "admin": SEEDED["shared"]},
    "private": {"anon": [], "A": ["a1", "a2", "a3"], "B": ["a3", "b1", "b2", "m3"], "admin": SEEDED["private"]},
    "readonly": {"anon": [], "A": [], "B": [], "admin": SEEDED["readonly"]},
}

# Status of creating a new document.
CREATE = {
    "public": {"anon": 201, "A": 201, "B": 201, "admin": 201},
    "shared": {"anon": 401, "A": 201, "B": 201, "admin": 201},
    "private": {"anon": 401, "A": 201, "B": 201, "admin": 201},
    "readonly": {"anon": 401, "A": 403, "B": 403, "admin": 201},
}


def update_status(level, principal, row):
    """PUT/PATCH/DELETE of an existing row."""
    visible = VISIBLE[level][principal]
    if visible == 401:
        return 401
    if row not in visible:
        return 404
    return 200 if row in WRITABLE[level][principal] else 403


def in_box(row):
    return ROWS[row][2] == IN_BOX


def tagged_x(row):
    return ROWS[row][3] == "x"


def q(obj):
    return urllib.parse.quote(json.dumps(obj, separators=(",", ":")))


class World:
    def __init__(self, daemon, users):
        self.d = daemon
        self.users = users  # "A"/"B" -> {"id", "token"}
        self.tokens = {"anon": None, "A": users["A"]["token"], "B": users["B"]["token"], "admin": ADMIN_TOKEN}
        self.real_ids = {}  # plain row name -> namespaced _id in the private collection

    def uid(self, name):
        return self.users[name]["id"]

    def call(self, principal, method, path, body=None):
        path, body = self.namespaced(principal, method, path, body)
        r = self.d.call(method, path, body, token=self.tokens[principal])
        r.body = self.plain_ids(r.body)
        return r

    # In a private collection a user's client-chosen _id must start with
    # "<user id>:" (so a taken id never reveals a row the caller cannot see).
    # The matrix names rows plainly ("a1"); these two helpers put the
    # creator's namespace on the wire and take it off the answers.
    def namespaced(self, principal, method, path, body):
        base = f"/{COLLECTION['private']}"
        if not path.startswith(base):
            return path, body
        user = principal in ("A", "B")
        if method == "POST" and user and isinstance(body, dict) and "_id" in body and ":" not in body["_id"]:
            real = f"{self.uid(principal)}:{body['_id']}"
            self.real_ids[body["_id"]] = real
            body = {**body, "_id": real}
        elif method == "POST" and isinstance(body, dict) and "_id" in body:
            self.real_ids.setdefault(body["_id"], body["_id"])  # an admin's id is used as given
        rest = path[len(base) + 1:] if path.startswith(base + "/") else ""
        plain = rest.split("?", 1)[0]
        if plain and not plain.startswith("_"):
            if plain not in self.real_ids and method == "PUT" and user:
                self.real_ids[plain] = f"{self.uid(principal)}:{plain}"
            if plain in self.real_ids:
                path = f"{base}/{self.real_ids[plain]}" + rest[len(plain):]
        return path, body

    def plain_ids(self, value):
        plain = {real: name for name, real in self.real_ids.items()}
        if isinstance(value, list):
            return [self.plain_ids(v) for v in value]
        if isinstance(value, dict) and isinstance(value.get("_id"), str) and value["_id"] in plain:
            return {**value, "_id": plain[value["_id"]]}
        return value

    def acl_lists(self, names):
        return {k: [self.uid(n) for n in v] for k, v in names.items()}

    def expected_creator(self, creator):
        return self.uid(creator) if creator in ("A", "B") else None

    def seed_body(self, row_id, row, extra=None):
        _, lists, location, tag = ROWS[row]
        body = {"_id": row_id, "location": location, "tag": tag, "seed": row}
        if lists:
            body["_acl"] = self.acl_lists(lists)
        body.update(extra or {})
        return body

    def create_row(self, level, row_id, row, extra=None):
        creator = ROWS[row][0]
        r = self.call(creator, "POST", "/" + COLLECTION[level], self.seed_body(row_id, row, extra))
        assert r.status == 201, (level, row_id, r)
        acl = r.body["_acl"]
        assert acl["creator"] == self.expected_creator(creator), r
        for k, v in self.acl_lists(ROWS[row][1]).items():
            assert acl[k] == v, r
        return r.body

    def admin_get(self, level, row_id):
        return self.call("admin", "GET", f"/{COLLECTION[level]}/{row_id}")

    def admin_delete_where(self, level, query):
        r = self.call("admin", "GET", f"/{COLLECTION[level]}?limit=1000&fields=_id&query={q(query)}")
        assert r.status == 200, r
        for doc in r.body:
            assert self.call("admin", "DELETE", f"/{COLLECTION[level]}/{urllib.parse.quote(doc['_id'])}").status == 200


@pytest.fixture(scope="module")
def world():
    with running_roostd(CONFIG) as d:
        users = {}
        for name, username in (("A", "alice"), ("B", "bob")):
            s = d.sign_up(username, email=f"{username}@example.org")
            users[name] = {"id": s["user"]["_id"], "token": s["token"]}
        w = World(d, users)
        for level in LEVELS:
            for row in SEEDED[level]:
                w.create_row(level, row, row)
        yield w


def list_ids(w, principal, level, extra="", limit=1000):
    r = w.call(principal, "GET", f"/{COLLECTION[level]}?sort=%7B%22_id%22%3A1%7D&limit={limit}{extra}")
    return r, ([doc["_id"] for doc in r.body] if r.status == 200 else None)


def expected_rows(level, principal, pred=lambda row: True):
    visible = VISIBLE[level][principal]
    if visible == 401:
        return 401
    return sorted(row for row in visible if pred(row))


MATRIX = [(level, p) for level in LEVELS for p in PRINCIPALS]
MATRIX_IDS = [f"{level}-{p}" for level, p in MATRIX]


# ---------------------------------------------------------------------------
# Reads: list, list with a query, list with a $box filter, _count, get.

@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("variant", ["all", "query", "box", "box+query"])
def test_list(world, level, principal, variant):
    preds = {
        "all": (lambda row: True, None),
        "query": (tagged_x, TAG_QUERY),
        "box": (in_box, BOX_QUERY),
        "box+query": (lambda row: in_box(row) and tagged_x(row), {"$and": [BOX_QUERY, TAG_QUERY]}),
    }
    pred, query = preds[variant]
    extra = f"&query={q(query)}" if query else ""
    expected = expected_rows(level, principal, pred)
    r, ids = list_ids(world, principal, level, extra + "&count=true")
    if expected == 401:
        assert_error(r, 401, "Unauthorized")
        return
    assert r.status == 200, r
    assert ids == expected
    assert r.header("X-Total-Count") == str(len(expected))
    # Paging walks the same visible rows, nothing else.
    paged = []
    for skip in range(0, len(expected) + 2, 2):
        _, page = list_ids(world, principal, level, extra + f"&skip={skip}", limit=2)
        paged += page
    assert paged == expected


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("variant", ["all", "query", "box"])
def test_count(world, level, principal, variant):
    pred, query = {"all": (lambda row: True, None), "query": (tagged_x, TAG_QUERY), "box": (in_box, BOX_QUERY)}[variant]
    path = f"/{COLLECTION[level]}/_count" + (f"?query={q(query)}" if query else "")
    r = world.call(principal, "GET", path)
    expected = expected_rows(level, principal, pred)
    if expected == 401:
        assert_error(r, 401, "Unauthorized")
    else:
        assert r.status == 200, r
        assert r.body == {"count": len(expected)}


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_get_by_id(world, level, principal):
    actual, expected = {}, {}
    for row in ROWS:
        r = world.call(principal, "GET", f"/{COLLECTION[level]}/{row}")
        actual[row] = r.status
        if r.status == 200:
            assert r.body["_id"] == row
            assert r.body["_acl"]["creator"] == world.expected_creator(ROWS[row][0])
        else:
            assert set(r.body) == {"error", "description"}
        visible = VISIBLE[level][principal]
        expected[row] = 401 if visible == 401 else (200 if row in visible else 404)
    assert actual == expected


def test_acl_of_seeded_rows(world):
    """The stored _acl is exactly what the server decided: creator from the session, lists from the client."""
    for level in LEVELS:
        for row in SEEDED[level]:
            doc = world.admin_get(level, row).body
            creator, lists = ROWS[row][0], ROWS[row][1]
            expected = {"creator": world.expected_creator(creator), **world.acl_lists(lists)}
            assert doc["_acl"] == expected, (level, row, doc)


# ---------------------------------------------------------------------------
# Writes: create, PUT (replace and create-by-id), PATCH, DELETE.

@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_create(world, level, principal):
    tag = f"scratch-{uuid.uuid4().hex[:8]}"
    try:
        r = world.call(principal, "POST", f"/{COLLECTION[level]}", {"name": "new", "tag": tag, "location": IN_BOX})
        assert r.status == CREATE[level][principal], r
        if r.status == 201:
            assert r.body["_acl"] == {"creator": world.expected_creator(principal)}
            got = world.admin_get(level, r.body["_id"])
            assert got.status == 200 and got.body["_acl"]["creator"] == world.expected_creator(principal)
        else:
            assert_error(r, r.status, {401: "Unauthorized", 403: "Forbidden"}[r.status])
            count = world.call("admin", "GET", f"/{COLLECTION[level]}/_count?query={q({'tag': tag})}")
            assert count.body == {"count": 0}
    finally:
        world.admin_delete_where(level, {"tag": tag})


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_put_new_id_creates(world, level, principal):
    row_id = f"put-new-{principal}"
    try:
        r = world.call(principal, "PUT", f"/{COLLECTION[level]}/{row_id}", {"name": "by put", "location": IN_BOX})
        assert r.status == CREATE[level][principal], r
        if r.status == 201:
            assert r.body["_acl"]["creator"] == world.expected_creator(principal)
        assert world.admin_get(level, row_id).status == (200 if r.status == 201 else 404)
    finally:
        world.call("admin", "DELETE", f"/{COLLECTION[level]}/{row_id}")


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_update_existing(world, level, principal, method):
    actual, expected = {}, {}
    for row in SEEDED[level] + ["nope"]:
        marker = f"{method}-{principal}-{uuid.uuid4().hex[:6]}"
        if row == "nope":
            # PATCH of a missing row is 404 (PUT of a missing id creates: see above).
            if method == "PUT":
                continue
            body = {"touchedBy": marker}
            expected[row] = 401 if VISIBLE[level][principal] == 401 else 404
        else:
            _, _, location, tag = ROWS[row]
            body = ({"location": location, "tag": tag, "seed": row, "touchedBy": marker}
                    if method == "PUT" else {"touchedBy": marker})
            expected[row] = update_status(level, principal, row)
        r = world.call(principal, method, f"/{COLLECTION[level]}/{row}", body)
        actual[row] = r.status
        if row == "nope":
            continue
        after = world.admin_get(level, row).body
        if r.status == 200:
            assert r.body["touchedBy"] == marker and after["touchedBy"] == marker
            # An update never moves the creator nor drops the lists.
            assert after["_acl"] == {"creator": world.expected_creator(ROWS[row][0]), **world.acl_lists(ROWS[row][1])}
            assert after["seed"] == row and after["tag"] == ROWS[row][3]
        else:
            assert set(r.body) == {"error", "description"}, r
            assert after.get("touchedBy") != marker
    assert actual == expected


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_delete(world, level, principal):
    prefix = f"del-{principal}-"
    try:
        for row in SEEDED[level]:
            world.create_row(level, prefix + row, row, {"scratch": prefix})
        actual, expected = {}, {}
        for row in SEEDED[level]:
            r = world.call(principal, "DELETE", f"/{COLLECTION[level]}/{prefix + row}")
            actual[row] = r.status
            expected[row] = update_status(level, principal, row)
            if r.status == 200:
                assert r.body == {"count": 1}
            assert world.admin_get(level, prefix + row).status == (404 if r.status == 200 else 200)
        r = world.call(principal, "DELETE", f"/{COLLECTION[level]}/{prefix}nope")
        actual["nope"] = r.status
        expected["nope"] = 401 if VISIBLE[level][principal] == 401 else 404
        assert actual == expected
    finally:
        world.admin_delete_where(level, {"scratch": prefix})


# ---------------------------------------------------------------------------
# _acl rules: forged creator, changing the creator, granting oneself access.

@pytest.mark.parametrize("level", ["public", "shared", "private"])
def test_forged_creator_on_create_is_ignored(world, level):
    b = world.uid("B")
    try:
        r = world.call("A", "POST", f"/{COLLECTION[level]}", {"_id": "forged-a", "scratch": "forged", "_acl": {"creator": b}})
        assert r.status == 201, r
        assert r.body["_acl"]["creator"] == world.uid("A")
        # B gained nothing: in private he cannot see it; in shared he cannot change it.
        expected_b = {"public": 200, "shared": 403, "private": 404}[level]
        assert world.call("B", "PATCH", f"/{COLLECTION[level]}/forged-a", {"x": 1}).status == expected_b
        if level == "public":
            r = world.call("anon", "POST", f"/{COLLECTION[level]}", {"_id": "forged-anon", "scratch": "forged", "_acl": {"creator": b}})
            assert r.status == 201 and r.body["_acl"]["creator"] is None, r
        r = world.call("admin", "POST", f"/{COLLECTION[level]}", {"_id": "forged-admin", "scratch": "forged", "_acl": {"creator": b}})
        assert r.status == 201 and r.body["_acl"]["creator"] is None, r
    finally:
        world.admin_delete_where(level, {"scratch": "forged"})


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_changing_creator_on_update_is_refused(world, level, method):
    row = "a1" if level != "readonly" else "m1"
    owner = "A" if level != "readonly" else "admin"
    callers = [owner, "admin"] if owner != "admin" else ["admin"]
    for caller in callers:
        body = {"_acl": {"creator": world.uid("B")}}
        if method == "PUT":
            body.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
        r = world.call(caller, method, f"/{COLLECTION[level]}/{row}", body)
        assert_error(r, 400, "InvalidDocument")
        assert world.admin_get(level, row).body["_acl"]["creator"] == world.expected_creator(ROWS[row][0])
    # Sending the unchanged creator back is fine.
    same = {"_acl": {"creator": world.expected_creator(ROWS[row][0])}, "touchedBy": "same-creator"}
    if method == "PUT":
        same.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
    r = world.call(owner, method, f"/{COLLECTION[level]}/{row}", same)
    assert r.status == 200, r


@pytest.mark.parametrize("level,row,expected", [
    ("shared", "a1", 403),    # B sees it but may not write it
    ("shared", "a2", 403),
    ("private", "a1", 404),   # B cannot see it at all
    ("private", "a2", 403),   # B may read it (read list), not write it
    ("readonly", "m1", 403),
    ("readonly", "m2", 403),
])
@pytest.mark.parametrize("method", ["PATCH", "PUT"])
def test_user_cannot_grant_himself_write(world, level, row, expected, method):
    before = world.admin_get(level, row).body["_acl"]
    body = {"_acl": {"write": [world.uid("B")], "read": [world.uid("B")]}}
    if method == "PUT":
        body.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
    r = world.call("B", method, f"/{COLLECTION[level]}/{row}", body)
    assert_error(r, expected)
    assert world.admin_get(level, row).body["_acl"] == before
    # And he still cannot write it afterwards.
    assert world.call("B", "PATCH", f"/{COLLECTION[level]}/{row}", {"x": 1}).status == expected


@pytest.mark.parametrize("level", ["shared", "private"])
def test_writer_may_change_lists_but_not_creator(world, level):
    prefix = "lists-"
    try:
        world.create_row(level, prefix + "a3", "a3", {"scratch": prefix})
        a, b = world.uid("A"), world.uid("B")
        # B is in a3's write list: he may change the lists...
        r = world.call("B", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": {"read": [b], "write": [b]}})
        assert r.status == 200, r
        assert r.body["_acl"] == {"creator": a, "read": [b], "write": [b]}
        # ...and the creator keeps full rights regardless of the lists.
        assert world.call("A", "GET", f"/{COLLECTION[level]}/{prefix}a3").status == 200
        r = world.call("A", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": {"write": []}})
        assert r.status == 200 and r.body["_acl"] == {"creator": a, "read": [b], "write": []}, r
        # Now B only reads it.
        assert world.call("B", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"x": 1}).status == 403
        # Malformed lists are refused.
        for bad in ({"write": "everyone"}, {"read": [1, 2]}, {"owner": a}, "B"):
            assert_error(world.call("A", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": bad}), 400, "InvalidDocument")
    finally:
        world.admin_delete_where(level, {"scratch": prefix})


def test_acl_query_cannot_widen_visibility(world):
    """Filtering on _acl fields only narrows what the caller may see."""
    a = world.uid("A")
    r = world.call("B", "GET", f"/privPlaces?query={q({'_acl.creator': a})}&sort=%7B%22_id%22%3A1%7D")
    assert [d["_id"] for d in r.body] == ["a2", "a3"]
    r = world.call("B", "GET", f"/privPlaces?query={q({'$or': [{'_acl': {'$exists': True}}, {'_acl': {'$exists': False}}]})}&sort=%7B%22_id%22%3A1%7D")
    assert [d["_id"] for d in r.body] == VISIBLE["private"]["B"]


# ---------------------------------------------------------------------------
# Bad tokens: garbage, tampered, a stored hash, revoked, expired.

def _bad_token_requests(level):
    c = COLLECTION[level]
    return [("GET", f"/{c}", None), ("GET", f"/{c}/_count", None), ("GET", f"/{c}/a1", None),
            ("POST", f"/{c}", {"scratch": "badtoken"}), ("PUT", f"/{c}/badtoken", {"scratch": "badtoken"}),
            ("PATCH", f"/{c}/a1", {"x": 1}), ("DELETE", f"/{c}/a1", None),
            ("GET", "/users", None), ("GET", "/users/me", None)]


def assert_invalid_token(r):
    assert_error(r, 401, "InvalidToken")
    assert (r.header("WWW-Authenticate") or "").startswith("Bearer"), r.headers


def _stored_token_hash(world):
    with sqlite3.connect(f"file:{world.d.data_dir / 'roost.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT token_hash FROM _sessions LIMIT 1").fetchone()[0]


@pytest.mark.parametrize("level", LEVELS)
def test_garbage_and_stolen_tokens_are_refused(world, level):
    good = world.tokens["A"]
    tampered = good[:-1] + ("A" if good[-1] != "A" else "B")
    for token in ["garbage", "x" * 43, tampered, good + "x", _stored_token_hash(world), ADMIN_TOKEN + "x", ADMIN_TOKEN[:-1]]:
        for method, path, body in _bad_token_requests(level):
            r = world.d.call(method, path, body, token=token)
            assert_invalid_token(r)
    assert world.call("admin", "GET", f"/{COLLECTION[level]}/_count?query={q({'scratch': 'badtoken'})}").body == {"count": 0}
    assert world.call("admin", "GET", f"/{COLLECTION[level]}/a1").body.get("x") is None


def test_revoked_token_is_refused_everywhere(world):
    s = world.d.sign_up("carol", email="carol@example.org")
    token = s["token"]
    assert world.d.call("GET", "/sharedPlaces/_count", token=token).status == 200
    r = world.d.call("POST", "/logout", token=token)
    assert r.status == 200 and r.body == {"loggedOut": True}, r
    for level in LEVELS:
        for method, path, body in _bad_token_requests(level):
            assert_invalid_token(world.d.call(method, path, body, token=token))
    # Other sessions are untouched.
    assert world.call("A", "GET", "/sharedPlaces/_count").status == 200
    # Logging out again is refused (the WWW-Authenticate header is checked below).
    assert_error(world.d.call("POST", "/logout", token=token), 401, "InvalidToken")


def test_expired_token_is_refused():
    """A second daemon with three-second sessions; the admin token comes from the environment.

    Expiry is kept in whole seconds (created second + lifetime), so a session lives between
    lifetime - 1 and lifetime seconds. Three seconds leaves a slow CI machine at least two to
    make the first call; sleeping lifetime + 1.2 s after it is past any expiry.
    """
    lifetime = 3
    config = (FAST_HASHING + f"session_lifetime: {lifetime}\ndefault_permission: public\n"
              "collections:\n  sharedPlaces: {permission: shared}\n")
    with running_roostd(config, env={"ROOST_ADMIN_TOKEN": ADMIN_TOKEN}) as d:
        s = d.sign_up("dave", email="dave@example.org")
        token = s["token"]
        assert d.call("POST", "/pubPlaces", {"n": 1}, token=token).status == 201
        time.sleep(lifetime + 1.2)
        for level in ("public", "shared"):
            for method, path, body in _bad_token_requests(level):
                assert_invalid_token(d.call(method, path, body, token=token))
        # A fresh log-in works again, and the admin token from ROOST_ADMIN_TOKEN is honoured.
        r = d.log_in("dave", "correct horse battery")
        assert r.status == 200, r
        assert d.call("GET", "/sharedPlaces", token=r.body["token"]).status == 200
        assert d.call("POST", "/sharedPlaces", {"n": 1}, token=ADMIN_TOKEN).status == 201


# ---------------------------------------------------------------------------
# Every 401 tells the client how to authenticate.

def _unauthenticated_requests(world):
    a = world.uid("A")
    reqs = []
    for level in ("shared", "private", "readonly"):
        reqs += [(m, p, b) for m, p, b in _bad_token_requests(level) if not p.startswith("/users")]
    reqs += [("GET", "/users", None), ("GET", "/users/_count", None), ("GET", f"/users/{a}", None),
             ("GET", "/users/me", None), ("PATCH", f"/users/{a}", {"x": 1}), ("PUT", f"/users/{a}", {"x": 1}),
             ("DELETE", f"/users/{a}", None), ("POST", "/logout", None)]
    return reqs


def test_every_anonymous_401_carries_www_authenticate(world):
    missing = []
    revoked = world.d.sign_up("erin")["token"]
    assert world.d.call("POST", "/logout", token=revoked).status == 200
    calls = [(m, p, b, None) for m, p, b in _unauthenticated_requests(world)]
    calls += [("POST", "/logout", None, revoked), ("POST", "/login", {"username": "alice", "password": "not her password"}, None)]
    for method, path, body, token in calls:
        r = world.d.call(method, path, body, token=token)
        assert_error(r, 401)
        if not (r.header("WWW-Authenticate") or "").startswith("Bearer"):
            missing.append(f"{method} {path}")
    assert missing == [], f"401 without WWW-Authenticate: {missing}"
