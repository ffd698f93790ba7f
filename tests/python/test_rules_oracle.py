"""Issue #35, the no-oracle guarantee of read rules (docs/RULES.md), randomised:
worlds that differ ONLY in rows the caller's read rule hides (absent, three
random sets of hidden rows with random field values, all deleted) must give
byte-identical answers to the same random requests: filters (with $regex,
limit-hitting ones included), sorts, skip, limit, count/total, /_count,
`after=` keyset pages, `fields=`, `explain=true`, GET and `resolve=` of ids
that are hidden in one world and missing in another, PATCH/PUT/DELETE (with
If-Match and If-None-Match) and POST of such ids, and /_batch. The method of
tests/python/test_hostile.py's private-level check (one daemon, the hidden
rows change between runs, the visible ones never), with rules instead of a
level. Seeded RNG; both engines (Makefile ENGINE_SUITE)."""

import json
import random

import pytest

from hostile_support import q
from hostile_world import random_filter, random_hidden_doc
from roost_harness import ADMIN_TOKEN, FAST_HASHING, running_roostd
from rules_reference import Caller, RuleSet, visible
from rules_world import qid, uniq

RULES = {
    "orPosts": RuleSet(
        level="shared",
        read={"$or": [{"published": True}, {"owner": "@caller.id"}]},
        create={"owner": "@caller.id"},
        update={"owner": "@caller.id"},
        delete={"owner": "@caller.id"},
    ),
    "orAcl": RuleSet(level="shared", read={"$or": [{"_acl.read": {"$in": "@caller.principals"}}, {"team": "@caller.id"}]}),
}

CONFIG = FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\ndefault_permission: shared\ncollections:\n" + "".join(
    f"  {name}:\n    permission: {r.level}\n    rules:\n" + "".join(
        f"      {op}: '{json.dumps(getattr(r, op))}'\n" for op in ("read", "create", "update", "delete") if getattr(r, op))
    for name, r in RULES.items())

FIELDS = ["secret", "n", "tags", "nested", "nested.k", "nested.s", "flag", "missing", "_id", "_createdAt",
          "published", "owner", "team"]
SORTS = ["n", "secret", "_id", "tags", "nested.k", "flag", "published", "_createdAt"]


@pytest.fixture(scope="module")
def node():
    with running_roostd(CONFIG) as d:
        d.people = {name: d.new_user(name) for name in ("alice", "bob")}
        yield d


def call(d, token, method, path, body=None, headers=None):
    r = d.call(method, path, body, token=token, headers=headers)
    assert r.status < 500, (method, path, r)
    return r


VOLATILE = {"date", "x-request-id"}


def observed(r):
    """Status, body and every header but the date and request id; a sealed X-Roost-Next by its length."""
    headers = sorted((k, v if k != "x-roost-next" else len(v)) for k, v in r.headers.items() if k not in VOLATILE)
    return r.status, r.raw, tuple(headers)


def ref(coll, i):
    return {"_type": "ref", "_collection": coll, "_id": i}


def seed_visible(d, coll, rng):
    """The rows bob reads, made once: alice's shared or published rows and bob's own,
    some referring to ids that will be hidden (H) or never exist (M)."""
    (a, ta), (b, tb) = d.people["alice"], d.people["bob"]
    hidden_ids = [f"{a}:h{k}" for k in range(4)] + [f"adm-h{k}" for k in range(2)]
    missing_ids = [f"{a}:m0", "adm-m0"]
    if coll == "orPosts":
        mine = lambda extra: {"owner": b, "published": False, **extra}  # noqa: E731
        theirs = lambda extra: {"owner": a, "published": True, **extra}  # noqa: E731
    else:
        mine = lambda extra: {"_acl": {"read": [b]}, **extra}  # noqa: E731
        theirs = lambda extra: {"_acl": {"read": [b, a]}, **extra}  # noqa: E731
    rows = [
        (tb, mine({"_id": f"{b}:own1", "secret": "b-secret-1", "n": 5, "tags": ["x", "y"], "flag": True,
                   "nested": {"k": 1}, "ref": ref(coll, hidden_ids[0])})),
        (tb, mine({"_id": f"{b}:own2", "secret": "hunter", "n": -3, "tags": [], "nested": {"k": 7, "s": "a" * 30},
                   "ref": ref(coll, missing_ids[0])})),
        (tb, mine({"_id": f"{b}:own3", "n": 12.5, "flag": False, "ref": ref(coll, hidden_ids[4])})),
        (ta, theirs({"_id": f"{a}:shared1", "secret": "shared-visible", "n": 7, "ref": ref(coll, f"{b}:own1")})),
        (ta, theirs({"_id": f"{a}:shared2", "secret": "hunter2-visible", "n": 0, "tags": ["x"], "nested": {"k": 3}})),
    ]
    if coll == "orAcl":
        rows.append((ADMIN_TOKEN, {"_id": "adm-team", "team": b, "n": 9, "secret": "team-row"}))
    for token, body in rows:
        r = call(d, token, "POST", f"/{coll}", body)
        assert r.status == 201, r
    return hidden_ids, missing_ids, [body for _, body in rows]


def hidden_doc(coll, rng, marker, unguessable, alice):
    doc = random_hidden_doc(rng, marker, unguessable)
    if coll == "orPosts":
        doc["published"] = rng.choice([False, "true", 1, None, [False]])
        if rng.random() < 0.7:
            doc["owner"] = rng.choice([alice, [alice], "bob", None])
    else:
        doc["_acl"] = rng.choice([{"read": [alice]}, {"write": [alice]}, {}])
        if rng.random() < 0.5:
            doc["team"] = rng.choice([alice, "bob-ish", None])
    return doc


def list_params(rng, pool):
    params = [f"query={q(random_filter(rng, pool, FIELDS))}", "count=true"]
    if rng.random() < 0.6:
        params.append(f"sort={q({rng.choice(SORTS): rng.choice([1, -1])})}")
    if rng.random() < 0.5:
        params.append(f"skip={rng.randint(0, 3)}")
    if rng.random() < 0.5:
        params.append(f"limit={rng.randint(1, 5)}")
    return "&".join(params)


def probes(coll, rng, pool, hidden_ids, missing_ids, token):
    """(label, request function) pairs; every function returns what a caller can compare."""
    out = []
    for _ in range(24):
        params = list_params(rng, pool)
        if rng.random() < 0.3:
            params += "&fields=" + ",".join(rng.sample(["secret", "n", "tags", "ref", "published"], 2))
        out.append((f"GET /{coll}?{params}", ("GET", f"/{coll}?{params}", None, None)))
        out.append((f"GET /{coll}/_count?{params.split('&')[0]}", ("GET", f"/{coll}/_count?{params.split('&')[0]}", None, None)))
    for _ in range(8):
        flt = random_filter(rng, pool, FIELDS) if rng.random() < 0.5 else {}
        sort = {rng.choice(SORTS): rng.choice([1, -1])}
        out.append((f"after= {flt} {sort}", ("PAGES", f"/{coll}?limit=2&count=true&query={q(flt)}&sort={q(sort)}", None, None)))
    for _ in range(6):
        flt = random_filter(rng, pool, FIELDS)
        out.append((f"_deltaset {flt}", ("DELTA", f"/{coll}/_deltaset?limit={rng.choice([1, 2, 1000])}&query={q(flt)}", None, None)))
    out.append(("explain", ("GET", f"/{coll}?explain=true&query={q({'secret': {'$regex': '^hunt'}})}", None, None)))
    out.append(("resolve list", ("GET", f"/{coll}?resolve=ref&sort={q({'_id': 1})}", None, None)))
    for i in hidden_ids + missing_ids:
        p = f"/{coll}/{qid(i)}"
        out += [
            (f"GET {i}", ("GET", p, None, None)),
            (f"GET {i} resolve", ("GET", p + "?resolve=ref", None, None)),
            (f"PATCH {i}", ("PATCH", p, {"x": 1}, None)),
            (f"PATCH {i} If-Match", ("PATCH", p, {"x": 1}, {"If-Match": '"abc"'})),
            (f"PUT {i} If-Match", ("PUT", p, {"x": 1}, {"If-Match": '"abc"'})),
            (f"PUT {i} If-None-Match", ("PUT", p, {"x": 1}, {"If-None-Match": "*"})),
            (f"PUT {i}", ("PUT", p, {"x": 1}, None)),
            (f"DELETE {i}", ("DELETE", p, None, None)),
            (f"DELETE {i} If-Match", ("DELETE", p, None, {"If-Match": '"abc"'})),
            (f"POST _id {i}", ("POST", f"/{coll}", {"_id": i, "x": 1}, None)),
            (f"batch {i}", ("POST", "/_batch", {"operations": [
                {"method": "PATCH", "path": p, "body": {"x": 2}}, {"method": "DELETE", "path": p}]}, None)),
            (f"batch {i} If-Match", ("POST", "/_batch", {"operations": [
                {"method": "PUT", "path": p, "body": {"x": 2}, "headers": {"If-Match": '"abc"'}},
                {"method": "PUT", "path": p, "body": {"x": 3}, "headers": {"If-None-Match": "*"}}]}, None)),
        ]
    return out


def run(d, token, plan):
    answers = []
    for label, (method, path, body, headers) in plan:
        if method == "PAGES":
            first = call(d, token, "GET", path)
            nxt = first.header("X-Roost-Next")
            second = call(d, token, "GET", path + f"&after={qid(nxt)}") if nxt else None
            answers.append((label, (observed(first), bool(nxt), observed(second) if second else None)))
        elif method == "DELTA":
            # A first sync: its rows (the cursor names the feed's head, which hidden writes move).
            r = call(d, token, "GET", path)
            seen = json.dumps({k: v for k, v in r.body.items() if k != "cursor"}).encode() if r.status == 200 else r.raw
            answers.append((label, (r.status, seen, None)))
        else:
            answers.append((label, observed(call(d, token, method, path, body, headers))))
    return answers


CASES = {"posts rule, bob": ("orPosts", "bob"), "posts rule, anonymous": ("orPosts", "anon"),
         "acl rule, bob": ("orAcl", "bob")}


@pytest.mark.parametrize("case", CASES)
def test_worlds_that_differ_in_hidden_rows_answer_the_same(node, case):
    coll, who = CASES[case]
    d = node
    rng = random.Random(3535 + list(CASES).index(case))
    (a, _), (b, tb) = d.people["alice"], d.people["bob"]
    token = tb if who == "bob" else None
    caller = Caller("bob", id=b) if who == "bob" else Caller("anon")
    if coll == "orAcl" and case.endswith("bob") and not hasattr(d, "acl_seeded"):
        d.acl_seeded = seed_visible(d, coll, rng)
    if coll == "orPosts" and not hasattr(d, "posts_seeded"):
        d.posts_seeded = seed_visible(d, coll, rng)
    hidden_ids, missing_ids, shown = d.acl_seeded if coll == "orAcl" else d.posts_seeded

    # Three versions of the hidden rows: a random subset of the H ids and random server-made ones.
    unguessables = [uniq("UNGUESSABLE") for _ in range(3)]
    versions = []
    for v, secret in enumerate(unguessables):
        chosen = rng.sample(hidden_ids, rng.randint(1, len(hidden_ids)))
        docs = {i: hidden_doc(coll, rng, uniq("-m"), secret, a) for i in chosen}
        docs.update({f"new{k}": hidden_doc(coll, rng, uniq("-m"), secret, a) for k in range(3)})
        versions.append(docs)
        for doc in docs.values():
            assert not visible(RULES[coll], caller, doc), ("the test's hidden row is visible", doc)
    pool = ["b-secret-1", "hunter", 5, 7, -3, True, None, "x", b, a, False, "true"]
    for docs in versions:
        for doc in docs.values():
            pool += [doc["secret"], doc.get("n", 0), doc["secret"][:5]] + \
                    [t for t in doc.get("tags", []) if not isinstance(t, float)]
    plan = probes(coll, rng, pool, hidden_ids, missing_ids, token)

    runs, labels = [run(d, token, plan)], ["no hidden rows"]
    for v, docs in enumerate(versions):
        made = []
        for i, doc in docs.items():
            if i.startswith("new"):
                r = call(d, ADMIN_TOKEN, "POST", f"/{coll}", doc)
            else:
                r = call(d, ADMIN_TOKEN, "PUT", f"/{coll}/{qid(i)}", doc)
            assert r.status in (200, 201), r
            made.append(r.body["_id"])
        runs.append(run(d, token, plan))
        labels.append(f"version {v + 1}")
        for i in made:
            assert call(d, ADMIN_TOKEN, "DELETE", f"/{coll}/{qid(i)}").status == 200
    runs.append(run(d, token, plan))
    labels.append("all deleted")

    first = runs[0]
    for label, answers in zip(labels[1:], runs[1:]):
        for (what, x), (_, y) in zip(first, answers):
            assert x == y, f"{case}: the answer changed with hidden rows ({labels[0]} vs {label}) for\n  {what}\n  {x}\n  {y}"
    for answers in runs:
        for what, x in answers:
            text = repr(x)
            for token_ in unguessables:
                assert token_ not in text, f"hidden data leaked into {what}: {text[:300]}"
    # Not vacuous: rows come back, some filters are refused for the regex limit, writes are 404s.
    statuses = [x[0] for _, x in first if isinstance(x[0], int)]
    assert 404 in statuses and 200 in statuses, statuses
    if who == "bob":
        assert any(x[0] == 200 and x[1] not in (b"[]", b'{"count":0}') for _, x in first if isinstance(x[0], int)), first
    # The visible rows are as they were: no probe wrote.
    for body in shown:
        got = call(d, ADMIN_TOKEN, "GET", f"/{coll}/{qid(body['_id'])}")
        assert got.status == 200 and all(got.body.get(k) == v for k, v in body.items() if k != "_acl"), got


# ---------------------------------------------------------------------------------------------
# Delta pages: limit=1 pages the same whether or not others changed rows the rule hides.

def delta_pages(d, token, coll, cursor):
    out = []
    for _ in range(100):
        r = call(d, token, "GET", f"/{coll}/_deltaset?limit=1&since={qid(cursor)}")
        assert r.status == 200, r
        b = r.body
        out.append(([{k: v for k, v in x.items() if k not in ("_createdAt", "_updatedAt")} for x in b["changed"]],
                    b["deleted"], b["more"]))
        cursor = b["cursor"]
        if not b["more"]:
            return out
    raise AssertionError("paging never ended")


def head(d, token, coll):
    r = call(d, token, "GET", f"/{coll}/_deltaset?limit=1000")
    while r.body["more"]:
        r = call(d, token, "GET", f"/{coll}/_deltaset?limit=1000&since={qid(r.body['cursor'])}")
    return r.body["cursor"]


@pytest.mark.parametrize("who", ["bob", "anon"])
def test_delta_pages_do_not_count_hidden_changes(node, who):
    d = node
    (a, ta), (b, tb) = d.people["alice"], d.people["bob"]
    token = tb if who == "bob" else None
    coll = "orPosts"
    visible_row = call(d, ta, "POST", f"/{coll}", {"owner": a, "published": True, "v": 0}).body["_id"]
    runs = []
    for noisy in (False, True, False):
        start = head(d, token, coll)
        for step in range(2):
            if noisy:
                made = [call(d, ta, "POST", f"/{coll}", {"owner": a, "published": False, "v": k}).body["_id"] for k in range(3)]
                assert call(d, ta, "PATCH", f"/{coll}/{qid(made[0])}", {"v": 9}).status == 200
                assert call(d, ta, "DELETE", f"/{coll}/{qid(made[1])}").status == 200
            assert call(d, ta, "PATCH", f"/{coll}/{qid(visible_row)}", {"v": step + 1}).status == 200
            assert call(d, ta, "POST", f"/{coll}", {"owner": a, "published": True, "v": 10 + step}).status == 201
        pages = delta_pages(d, token, coll, start)
        runs.append([(c[:1] and [{k: v for k, v in c[0].items() if k != "_id"}], dl, m) for c, dl, m in pages])
    assert runs[0] == runs[2], "the same actions page the same"
    assert runs[1] == runs[0], (who, runs[1], runs[0])
    assert len(runs[0]) >= 3, runs[0]
