"""The world of the access-rule tests (issue #35, docs/RULES.md): one roostd with
a collection per rule set, four callers, the seeded rows and request helpers.
The expectations come from rules_reference.py."""

import datetime
import json
import urllib.parse
import uuid

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, json_query as q, running_roostd
from rules_reference import Caller, RuleSet

# The rule sets, written once: the config is made from them, and the reference reads them.
RULE_SETS = {
    # Published or mine; owner-only create and update; `verified` server-only; moderators delete.
    "posts": RuleSet(
        level="shared",
        read={"$or": [{"published": True}, {"owner": "@caller.id"}]},
        create={"owner": "@caller.id", "verified": {"$exists": False}},
        update={"owner": "@caller.id", "verified": "@previous.verified"},
        delete={"$or": [{"owner": "@caller.id"}, {"@caller.roles": "moderator"}]},
    ),
    # Scheduled publishing with @now.
    "timed": RuleSet(level="shared", read={"$or": [{"publishAt": {"$lte": "@now"}}, {"owner": "@caller.id"}]}),
    # A literal string starting with @ (@@home is the text @home), on a public level.
    "literal": RuleSet(level="public", read={"$or": [{"tag": "@@home"}, {"owner": "@caller.id"}]}),
    # _acl lists through @caller.principals (the creator alone does not read).
    "acled": RuleSet(level="shared", read={"_acl.read": {"$in": "@caller.principals"}}),
    # A caller condition: only signed-in callers, and only published rows.
    "members": RuleSet(level="public", read={"@caller.signedIn": True, "published": True},
                       create={"@caller.signedIn": True}),
    # An owner may hand a row over: the update rule tests the stored document only (@previous as a key).
    "transfer": RuleSet(level="shared", read={"$or": [{"published": True}, {"owner": "@caller.id"}]},
                        create={"owner": "@caller.id"}, update={"@previous.owner": "@caller.id"},
                        delete={"owner": "@caller.id"}),
    # Nested paths, $and, $in, $lt, arrays that contain: team rows.
    "teams": RuleSet(
        level="shared",
        read={"$and": [{"meta.visibility": {"$in": ["team", "all"]}},
                       {"$or": [{"meta.visibility": "all"}, {"meta.members": "@caller.id"}]}]},
        create={"meta.owner": "@caller.id"},
        update={"meta.owner": "@caller.id", "meta.level": {"$lt": 9}},
        delete={"meta.owner": "@caller.id", "meta.level": {"$lt": 3}},
    ),
    # A create rule on the system fields a document is stored with.
    "sysfields": RuleSet(level="shared", create={"_acl.creator": "@caller.id", "_id": {"$exists": True},
                                                 "_createdAt": {"$exists": True}, "_updatedAt": {"$exists": True}}),
    # Reference holders: one every caller reads, one only the holder's owner reads.
    "holders": RuleSet(level="public"),
    "hiddenHolders": RuleSet(level="shared", read={"owner": "@caller.id"}),
    # Holders whose references are not declared (not checked): may name a missing id.
    "looseHolders": RuleSet(level="public"),
}

# "A read rule that admits no anonymous caller at all answers 401 to one" (docs/RULES.md):
# members' rule requires a session. (acled's rule admits no anonymous caller either, as
# an anonymous caller has no principals, but the daemon decides it per row: 200 [] and 404s.)
ANONYMOUS_REFUSED = {"members"}

REFERENCES = {
    "holders": "post: {collection: posts, on_delete: restrict}",
    "hiddenHolders": "post: {collection: posts, on_delete: restrict}",
}


def config_yaml(rule_sets=RULE_SETS):
    lines = [f"admin_token: {ADMIN_TOKEN}", "default_permission: shared", "collections:"]
    for name, rules in rule_sets.items():
        lines.append(f"  {name}:")
        lines.append(f"    permission: {rules.level}")
        ops = {op: getattr(rules, op) for op in ("read", "create", "update", "delete") if getattr(rules, op) is not None}
        if ops:
            lines.append("    rules:")
            for op, rule in ops.items():
                lines.append(f"      {op}: '{json.dumps(rule)}'")
        if name in REFERENCES:
            lines.append("    references:")
            lines.append(f"      {REFERENCES[name]}")
    return FAST_HASHING + "\n".join(lines) + "\n"


CONFIG = config_yaml()
CALLERS = ["anon", "alice", "bob", "admin"]
PAST, FUTURE = "2001-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z"


def now_text():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def uniq(prefix=""):
    return prefix + uuid.uuid4().hex[:8]


def qid(i):
    return urllib.parse.quote(i, safe="")


# Row templates per collection: name -> (who creates it, body). "A"/"B" stand for alice's
# and bob's ids in bodies and _acl lists. Admin-made rows carry any owner.
TEMPLATES = {
    "posts": {
        "a_pub": ("admin", {"owner": "A", "published": True, "n": 1}),
        "a_draft": ("admin", {"owner": "A", "published": False, "n": 2}),
        "a_verified": ("admin", {"owner": "A", "published": True, "verified": True, "n": 3}),
        "b_pub": ("admin", {"owner": "B", "published": True, "n": 4}),
        "b_draft": ("admin", {"owner": "B", "published": False, "n": 5}),
        "orphan": ("admin", {"published": False, "n": 6}),
        "nested_owner": ("admin", {"owner": ["A", "B"], "published": False, "n": 7}),  # an array contains
    },
    "timed": {
        "a_past": ("alice", {"owner": "A", "publishAt": PAST, "n": 1}),
        "a_future": ("alice", {"owner": "A", "publishAt": FUTURE, "n": 2}),
        "b_future": ("bob", {"owner": "B", "publishAt": FUTURE, "n": 3}),
        "unscheduled": ("bob", {"owner": "B", "n": 4}),
    },
    "literal": {
        "at_home": ("anon", {"tag": "@home", "n": 1}),
        "home": ("anon", {"tag": "home", "n": 2}),
        "double_at": ("anon", {"tag": "@@home", "n": 3}),
        "b_own": ("bob", {"tag": "x", "owner": "B", "n": 4}),
    },
    "acled": {
        "for_b": ("alice", {"_acl": {"read": ["B"]}, "n": 1}),
        "for_none": ("alice", {"n": 2}),
        "for_both": ("alice", {"_acl": {"read": ["A", "B"]}, "n": 3}),
        "b_writes": ("alice", {"_acl": {"write": ["B"]}, "n": 4}),
    },
    "transfer": {
        "a_pub": ("admin", {"owner": "A", "published": True, "n": 1}),
        "a_draft": ("admin", {"owner": "A", "published": False, "n": 2}),
        "b_pub": ("admin", {"owner": "B", "published": True, "n": 3}),
        "nobody": ("admin", {"published": True, "n": 4}),
    },
    "teams": {
        "all_open": ("admin", {"meta": {"visibility": "all", "owner": "A", "level": 1}, "n": 1}),
        "team_ab": ("admin", {"meta": {"visibility": "team", "members": ["A", "B"], "owner": "A", "level": 2}, "n": 2}),
        "team_a": ("admin", {"meta": {"visibility": "team", "members": ["A"], "owner": "A", "level": 5}, "n": 3}),
        "team_b": ("admin", {"meta": {"visibility": "team", "members": ["B"], "owner": "B", "level": 2}, "n": 4}),
        "b_high": ("admin", {"meta": {"visibility": "team", "members": ["B"], "owner": "B", "level": 9}, "n": 5}),
        "none": ("admin", {"meta": {"visibility": "none", "members": ["A", "B"], "owner": "A"}, "n": 6}),
        "no_meta": ("admin", {"n": 7}),
    },
    "members": {
        "pub": ("alice", {"published": True, "n": 1}),
        "draft": ("bob", {"published": False, "n": 2}),
    },
}


class World:
    def __init__(self, d, users):
        self.d = d
        self.users = users  # "alice"/"bob" -> (id, token)
        self.callers = {
            "anon": Caller("anon"),
            "alice": Caller("alice", id=users["alice"][0]),
            "bob": Caller("bob", id=users["bob"][0]),
            "admin": Caller("admin", admin=True),
        }
        self.tokens = {"anon": None, "alice": users["alice"][1], "bob": users["bob"][1], "admin": ADMIN_TOKEN}
        self.base = {}  # collection -> {template name: stored doc} of the rows seeded once

    def call(self, who, method, path, body=None, headers=None):
        r = self.d.call(method, path, body, token=self.tokens[who], headers=headers)
        assert r.status < 500, (who, method, path, r)
        return r

    def ids(self, value):
        """A template body with "A"/"B" replaced by the users' ids."""
        names = {"A": self.users["alice"][0], "B": self.users["bob"][0]}
        if isinstance(value, str):
            return names.get(value, value)
        if isinstance(value, list):
            return [self.ids(v) for v in value]
        if isinstance(value, dict):
            return {k: self.ids(v) for k, v in value.items()}
        return value

    def seed(self, coll, template, marker):
        who, body = TEMPLATES[coll][template]
        body = {**self.ids(body), "name": template, "seed": marker}
        r = self.call(who, "POST", f"/{coll}", body)
        assert r.status == 201, (coll, template, r)
        return self.stored(coll, r.body["_id"])

    def stored(self, coll, i):
        r = self.call("admin", "GET", f"/{coll}/{qid(i)}")
        return r.body if r.status == 200 else None

    def etag(self, coll, i):
        return self.call("admin", "GET", f"/{coll}/{qid(i)}").header("ETag")


@pytest.fixture(scope="module")
def world():
    with running_roostd(CONFIG) as d:
        users = {name: d.new_user(name) for name in ("alice", "bob")}
        w = World(d, users)
        for coll in TEMPLATES:
            w.base[coll] = {t: w.seed(coll, t, "base") for t in TEMPLATES[coll]}
        yield w


def list_names(w, who, coll, query, sort=None, extra=""):
    sort = sort or {"name": 1}
    r = w.call(who, "GET", f"/{coll}?limit=1000&count=true&query={q(query)}&sort={q(sort)}{extra}")
    return r, ([d["name"] for d in r.body] if r.status == 200 else None)
