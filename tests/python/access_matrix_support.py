"""The world of the access-matrix tests: one roostd with a collection per
permission level, four principals, the seeded rows and the expectation tables."""

import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, json_query as q, running_roostd


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

    def in_wire_order(self, level, rows):
        """`rows` (plain names) in the order of their ids on the wire: a list
        sorted by `_id` sorts a private row by its creator's namespace first
        (server-made user ids carry no creation order within a second)."""
        if level != "private":
            return sorted(rows)
        return sorted(rows, key=lambda row: self.real_ids.get(row, row))

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
