"""The shared world of the hostile-review tests (issue #14): one daemon with
five users and their private rows, and the random probes run against it."""

import json
import re
import uuid

import pytest

from roost_harness import engine
from hostile_support import ADMIN_TOKEN, FAST_HASHING, account, hostile_roostd, q


ADMIN = ADMIN_TOKEN

CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: public
files_permission: public
collections:
  pub: {{permission: public}}
  pubRegex: {{permission: public}}
  pubNul: {{permission: public}}
  prv: {{permission: private}}
  prvRand: {{permission: private}}
  prvIds: {{permission: private}}
  prvVis: {{permission: private}}
  sharedNotes: {{permission: shared}}
"""

# Patterns that exceed PCRE2's match limit on any string of ~20+ characters
# (every _createdAt and 24-hex _id qualifies).
CATASTROPHIC = [
    "(*NO_START_OPT)(?:.|.)*(?!)",
    "(?:.|.)*(?!)",
    "^(?:.*.*)*(?!)",
    "(.*a|.*b|.*.)*$(?!)",
]
if engine.name() == "postgresql":
    # PostgreSQL refuses PCRE2's verbs and lookaround before any row is read
    # (400 for everyone, docs/ENGINES.md); these compile in PCRE2 but are too
    # large for PostgreSQL's regex engine when first evaluated on a row (2201B).
    CATASTROPHIC = [
        "((.{1,40}){1,40}){1,60}",
        "((a{1,50}){1,50}){1,50}",
        "((x{1,50}){1,50}){1,50}",
        "((b{2,50}){1,50}){1,50}",
    ]


def uniq(prefix):
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def normalized(resp, *ids):
    """(status, error code, description) with the given ids replaced, to compare
    the answer for a taken id with the answer for a free one."""
    text = resp.raw.decode(errors="replace")
    for i in sorted(ids, key=len, reverse=True):
        text = text.replace(json.dumps(i)[1:-1], "<ID>").replace(i, "<ID>")
    return resp.status, text


def observed(resp):
    """What a caller can compare between two answers: status, body bytes, X-Total-Count."""
    return resp.status, resp.raw, resp.header("X-Total-Count")


class World:
    def __init__(self, d):
        self.d = d
        self.users = {}

    def user(self, name):
        if name not in self.users:
            self.users[name] = account(self.d, uniq(name + "-"))
        return self.users[name]

    def uid(self, name):
        return self.user(name)["id"]

    def call(self, who, method, path, body=None, **kw):
        token = ADMIN if who == "admin" else None if who == "anon" else self.user(who)["token"]
        return self.d.call(method, path, body, token=token, **kw)

    def send(self, sender, recipient, text):
        r = self.call(sender, "POST", "/messages", {"recipientId": self.uid(recipient), "text": text})
        assert r.status == 201, r
        return r.body

    def thread_id(self, a, b):
        return ":".join(sorted([self.uid(a), self.uid(b)]))


@pytest.fixture(scope="module")
def world():
    with hostile_roostd(CONFIG) as d:
        w = World(d)
        # alice: owner of private data and sender; bob: observer who never takes part
        # in messaging; carol: stranger; dave, erin: other participants.
        for name in ("alice", "bob", "carol", "dave", "erin"):
            w.user(name)
        yield w


# --- randomised: a random private document, random filters ------------------

def random_scalar(rng, marker):
    return rng.choice([
        rng.choice(["hunter2", "swordfish", "letmein", "p@ss(w)ord*", "ÆØÅ", "", "a" * 30]) + marker,
        rng.randint(-1000, 1000), rng.random() * 100, rng.choice([True, False, None]),
    ])


def random_hidden_doc(rng, marker, unguessable):
    doc = {
        "secret": rng.choice(["hunter2", "swordfish", "letmein", "zz top", "a" * 40]) + marker,
        "n": rng.randint(-50, 50),
        "tags": [random_scalar(rng, marker) for _ in range(rng.randint(0, 4))],
        "nested": {"k": rng.randint(0, 9), "pin": unguessable, "s": random_scalar(rng, marker)},
        "flag": rng.choice([True, False]),
        "diary": "dear diary " + unguessable,
    }
    for key in rng.sample(["tags", "nested", "flag", "n"], rng.randint(0, 2)):
        del doc[key]  # fields that exist in one version and not in another ($exists)
    return doc


FIELDS = ["secret", "n", "tags", "nested", "nested.k", "nested.s", "flag", "missing", "_id", "_createdAt"]


def random_condition(rng, pool, fields=FIELDS):
    field = rng.choice(fields)
    value = rng.choice(pool)
    strings = [v for v in pool if isinstance(v, str) and v]
    prefix = rng.choice(strings)[: rng.randint(1, 6)] if strings else "h"
    kind = rng.randrange(12)
    if kind == 0:
        cond = value
    elif kind == 1:
        cond = {"$regex": "^" + re.escape(prefix), **({"$options": "i"} if rng.random() < 0.3 else {})}
    elif kind == 2:
        cond = {"$regex": rng.choice(CATASTROPHIC)}
    elif kind == 3:
        cond = {rng.choice(["$gt", "$gte", "$lt", "$lte"]): value}
    elif kind == 4:
        cond = {"$gt": rng.randint(-60, 0), "$lt": rng.randint(0, 60)}
    elif kind == 5:
        cond = {"$in": rng.sample(pool, min(len(pool), rng.randint(1, 4)))}
    elif kind == 6:
        cond = {"$nin": rng.sample(pool, min(len(pool), rng.randint(1, 3)))}
    elif kind == 7:
        cond = {"$exists": rng.choice([True, False])}
    elif kind == 8:
        cond = {"$ne": value}
    elif kind == 9:
        cond = {"$size": rng.randint(0, 4)}
    elif kind == 10:
        cond = {"$elemMatch": {"$regex": "^" + re.escape(prefix)}}
    else:
        cond = {"$not": {"$regex": "^" + re.escape(prefix)}}
    return {field: cond}


def random_filter(rng, pool, fields=FIELDS):
    shape = rng.randrange(6)
    if shape == 0:
        return random_condition(rng, pool, fields)
    if shape in (1, 2):
        # The oracle shape: a guess about hidden data AND a limit-hitting regex.
        c = random_condition(rng, pool, fields)
        other = rng.choice(["_createdAt", "_id", "_updatedAt"])
        if other not in c:
            c[other] = {"$regex": rng.choice(CATASTROPHIC)}
        return c
    if shape == 3:
        return {"$and": [random_condition(rng, pool, fields), random_condition(rng, pool, fields)]}
    if shape == 4:
        return {"$or": [random_condition(rng, pool, fields), random_condition(rng, pool, fields)]}
    return {"$nor": [random_condition(rng, pool, fields)]}


def random_list_params(rng, pool, sort_fields):
    params = [f"query={q(random_filter(rng, pool))}", "count=true"]
    if rng.random() < 0.6:
        params.append(f"sort={q({rng.choice(sort_fields): rng.choice([1, -1])})}")
    if rng.random() < 0.5:
        params.append(f"skip={rng.randint(0, 3)}")
    if rng.random() < 0.5:
        params.append(f"limit={rng.randint(1, 5)}")
    return "&".join(params)


def run_probes(world, who, probes):
    return [(path, observed(world.call(who, "GET", path))) for path in probes]


def assert_same_everywhere(runs, labels, forbidden):
    """Every version's answers are byte-identical to the first, and none contains hidden data."""
    first = runs[0]
    for label, run in zip(labels[1:], runs[1:]):
        for (path, a), (_, b) in zip(first, run):
            assert a == b, f"answer changed with A's hidden document ({labels[0]} vs {label}) for\n  GET {path}\n  {a}\n  {b}"
    for run in runs:
        for path, (status, raw, total) in run:
            for token in forbidden:
                assert token.encode() not in raw, f"hidden data {token!r} leaked into GET {path}: {raw[:300]!r}"
