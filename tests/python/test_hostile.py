"""Issue #14: the holes a hostile review found, reproduced, asserting the fixed
behaviour. Each section names the hole it guards:

 1. private-data oracle: a filter that fails (or counts, sorts, skips,
    resolves) on rows the caller cannot see;
 2. existence of a private row through a client-chosen `_id` (POST 409, PUT
    create, PATCH/DELETE answers);
 3. thread squatting / "who talks to whom" through client-written threads;
 4. forged sender: messages changed after they were sent;
 5. query path blow-up (exponential SQL, 500 "parser stack overflow");
 6. objects with many keys (quadratic parsing on the writer and the loops,
    body parsed before the access check, slow HTML rendering);
 7. regexes that allocate gigabytes;
 8. NUL bytes truncated when bound to SQLite;
 9. unbounded thumbnail variants;
10. every error is {"error", "description"}, and nothing here yields a 5xx
    other than 503 (checked on every answer by HostileDaemon.call).

Runaway cases run on their own daemons, which are killed right after their
test (and by an RSS watchdog past +600 MB), so a failing run stays cheap.
This file: sections 1, 8 and 9. test_hostile_ids_messages.py: 2 to 4;
test_hostile_runaway.py: 5 to 7.
"""

import random
import time

import pytest

from hostile_support import q
from hostile_world import (
    CATASTROPHIC,
    assert_same_everywhere,
    observed,
    random_filter,
    random_hidden_doc,
    random_list_params,
    run_probes,
    uniq,
    world,
)
from roost_harness import png


# ===========================================================================
# 1. Visibility first: nothing the caller sends is evaluated on rows they cannot read.

@pytest.mark.parametrize("collection", ["prv", "messages"])
def test_failing_filter_is_not_an_oracle_on_private_rows(world, collection):
    """The issue's reproduction: B's answer must not depend on whether A's hidden
    secret starts with "hunt"."""
    field = "secret" if collection == "prv" else "text"
    if collection == "prv":
        r = world.call("alice", "POST", "/prv", {"secret": "hunter2"})
        assert r.status == 201, r
    else:
        world.send("alice", "dave", "hunter2")  # bob is no participant of any message
    answers = {}
    for guess in ("^hunt", "^x"):
        flt = {field: {"$regex": guess}, "_createdAt": {"$regex": CATASTROPHIC[0]}}
        answers[guess] = [observed(world.call("bob", "GET", f"/{collection}?count=true&query={q(flt)}")),
                          observed(world.call("bob", "GET", f"/{collection}/_count?query={q(flt)}"))]
    assert answers["^hunt"] == answers["^x"], "B's answer depends on A's private row"
    assert answers["^x"][0] == (200, b"[]", "0")
    assert answers["^x"][1][:2] == (200, b'{"count":0}')


def test_regex_limit_on_a_visible_row_is_400_for_everyone(world):
    """A regex that hits PCRE2's limit on a row the caller sees is a 400 (JSON error), for every principal."""
    r = world.call("anon", "POST", "/pubRegex", {"s": "a" * 40})
    assert r.status == 201, r
    mine = world.call("bob", "POST", "/prvVis", {"s": "b" * 40})
    assert mine.status == 201, mine
    for pattern in CATASTROPHIC:
        flt = q({"s": {"$regex": pattern}})
        for who in ("anon", "bob", "admin"):
            got = world.call(who, "GET", f"/pubRegex?query={flt}")
            assert got.status == 400 and got.body["error"], (who, pattern, got)
        # In a private collection: bob's own row fails; alice sees no row there, so she gets 200 [].
        got = world.call("bob", "GET", f"/prvVis?query={flt}")
        assert got.status == 400, (pattern, got)
        got = world.call("admin", "GET", f"/prvVis?query={flt}")
        assert got.status == 400, (pattern, got)
        got = world.call("alice", "GET", f"/prvVis?query={flt}&count=true")
        assert observed(got) == (200, b"[]", "0"), (pattern, got)


def test_randomised_private_document_never_changes_another_users_answers(world):
    rng = random.Random(1414)
    a, b = world.uid("alice"), world.uid("bob")
    hidden_id = f"{a}:hidden"
    # What bob sees: his own rows (one refers to the hidden row, one to an absent id),
    # and one row of alice's she shared with him.
    visible = [
        {"_id": f"{b}:own1", "secret": "b-secret-1", "n": 5, "tags": ["x", "y"], "flag": True, "nested": {"k": 1},
         "ref": {"_type": "ref", "_collection": "prvRand", "_id": hidden_id}},
        {"_id": f"{b}:own2", "secret": "hunter", "n": -3, "tags": [], "nested": {"k": 7, "s": "a" * 30},
         "ref": {"_type": "ref", "_collection": "prvRand", "_id": f"{a}:never-existed"}},
        {"_id": f"{b}:own3", "n": 12.5, "flag": False},
    ]
    for doc in visible:
        assert world.call("bob", "POST", "/prvRand", doc).status == 201
    shared = world.call("alice", "POST", "/prvRand", {"_id": f"{a}:shared", "secret": "shared-visible", "n": 7,
                                                       "_acl": {"read": [b]}})
    assert shared.status == 201, shared
    unguessables = [uniq("UNGUESSABLE") for _ in range(3)]
    versions = [random_hidden_doc(rng, uniq("-m"), u) for u in unguessables]

    # One set of filters for every version, built from every version's values.
    pool = ["b-secret-1", "hunter", 5, 7, -3, True, None, "x"]
    for v in versions:
        pool += [v["secret"], v.get("n", 0), v["secret"][:5]] + [t for t in v.get("tags", []) if not isinstance(t, float)]
    sort_fields = ["n", "secret", "_id", "tags", "nested.k", "flag"]
    probes = []
    for _ in range(40):
        params = random_list_params(rng, pool, sort_fields)
        probes.append(f"/prvRand?{params}")
        probes.append(f"/prvRand/_count?{params.split('&')[0]}")
    probes += [f"/prvRand?resolve=ref&sort={q({'_id': 1})}", f"/prvRand/{b}:own1?resolve=ref",
               f"/prvRand/{b}:own2?resolve=ref", f"/prvRand/{hidden_id}", f"/prvRand/{hidden_id}?resolve=ref"]

    runs, labels = [run_probes(world, "bob", probes)], ["absent"]
    for i, doc in enumerate(versions):
        r = world.call("alice", "PUT", f"/prvRand/{hidden_id}", doc)
        assert r.status in (200, 201), r
        runs.append(run_probes(world, "bob", probes))
        labels.append(f"version {i + 1}")
    assert world.call("alice", "DELETE", f"/prvRand/{hidden_id}").status == 200
    runs.append(run_probes(world, "bob", probes))
    labels.append("deleted")
    assert_same_everywhere(runs, labels, unguessables + [hidden_id + "?"])
    # The probes are not vacuous: some return rows, some are refused for the regex limit.
    statuses = {s for run in runs for _, (s, _, _) in run}
    assert 200 in statuses


def test_randomised_private_messages_never_change_a_strangers_answers(world):
    """The same for `messages` and `threads`: carol (who talks to dave) must not
    learn anything of alice's messages to erin, nor that they talk."""
    rng = random.Random(1415)
    a, e, c, d = (world.uid(n) for n in ("alice", "erin", "carol", "dave"))
    # Carol's own message is short, so a limit-hitting regex on `text` passes over it,
    # while alice's hidden texts are long enough to trip it (the oracle's lever).
    world.send("carol", "dave", "hi")
    tid = ":".join(sorted([a, e]))
    unguessables = [uniq("UNGUESSABLE") for _ in range(3)]
    texts = [f"hunter2 {unguessables[0]}", f"swordfish {unguessables[1]}", f"hunter3 {unguessables[2]}"]
    pool = [a, e, c, d, tid, "hunter2", "hunter", "swordfish", "carol", [a, e], [e], True, 1]
    msg_fields = ["text", "text", "text", "senderId", "recipients", "recipientId", "threadId", "editedAt", "_createdAt", "_id"]
    thread_fields = ["_id", "participants", "lastMessageAt", "lastMessage._id", "lastMessage", "_createdAt"]

    probes = []
    for coll, fields in (("messages", msg_fields), ("threads", thread_fields)):
        for f in [random_filter(rng, pool, fields) for _ in range(24)]:
            extra = f"&sort={q({rng.choice(fields): rng.choice([1, -1])})}" if rng.random() < 0.5 else ""
            extra += f"&skip={rng.randint(0, 2)}" if rng.random() < 0.4 else ""
            resolve = "&resolve=lastMessage" if coll == "threads" and rng.random() < 0.5 else ""
            probes.append(f"/{coll}?count=true&query={q(f)}{extra}{resolve}")
            probes.append(f"/{coll}/_count?query={q(f)}")
    probes += ["/threads?resolve=lastMessage", f"/threads/{tid}", f"/threads/{tid}?resolve=lastMessage",
               "/messages?count=true", "/threads/_count", "/messages/_count"]

    runs, labels = [run_probes(world, "carol", probes)], ["before alice wrote to erin"]
    hidden_ids = []
    first = world.send("alice", "erin", texts[0])
    hidden_ids.append(first["_id"])
    runs.append(run_probes(world, "carol", probes))
    labels.append("one message")
    r = world.call("alice", "PATCH", f"/messages/{first['_id']}", {"text": texts[1]})
    assert r.status == 200, r
    runs.append(run_probes(world, "carol", probes))
    labels.append("edited")
    hidden_ids.append(world.send("erin", "alice", texts[2])["_id"])
    runs.append(run_probes(world, "carol", probes))
    labels.append("a reply")
    assert_same_everywhere(runs, labels, unguessables + hidden_ids)


# ===========================================================================
# 8. NUL bytes reach SQLite whole.

NUL_QUERIES = [
    {"s": {"$regex": "(\u0000)"}},
    {"s": {"$regex": "\u0000"}},
    {"s": {"$regex": "^a\u0000b$"}},
    {"s": "a\u0000b"},
    {"s": {"$in": ["a\u0000b", "\u0000"]}},
    {"s": {"$gt": "a\u0000"}},
    {"s\u0000": 1},
    {"s": {"$regex": "a", "$options": "\u0000"}},
]


@pytest.mark.parametrize("flt", NUL_QUERIES, ids=[f"q{i}" for i in range(len(NUL_QUERIES))])
def test_nul_bytes_in_filters_never_500(world, flt):
    world.call("anon", "POST", "/pubNul", {"s": "a"})
    r = world.call("anon", "GET", f"/pubNul?query={q(flt)}")
    assert r.status in (200, 400), r


def test_nul_bytes_are_refused_whole_not_compared_cut_short(world):
    # SQLite's JSON functions end a string at U+0000, so a NUL could make a
    # filter compare a different string than was stored: refused everywhere.
    for doc in ({"s": "x\u0000y"}, {"list": ["\u0000"]}, {"nested": {"t": "\u0000end"}}, {"k\u0000": 1}):
        r = world.call("anon", "POST", "/pubNul2", doc)
        assert r.status == 400 and r.body["error"] == "InvalidDocument", r
    assert world.call("anon", "POST", "/pubNul2", {"s": "x"}).status == 201
    for flt in ({"s": "x\u0000y"}, {"s": {"$in": ["x\u0000"]}}, {"s\u0000": 1}):
        r = world.call("anon", "GET", f"/pubNul2?query={q(flt)}")
        assert r.status == 400 and r.body["error"] == "InvalidQuery", r
    assert world.call("anon", "GET", "/pubNul2/_count").body == {"count": 1}


def test_200_widths_do_not_store_200_variants(world):
    d = world.d
    r = d.call("POST", "/files", raw_body=png(300, 200, 7), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    fid = r.body["_id"]
    statuses = {}
    for w in range(20, 220):
        t = d.call("GET", f"/files/{fid}/thumbnail?w={w}", timeout=30)
        statuses[t.status] = statuses.get(t.status, 0) + 1
    assert 200 in statuses, statuses
    time.sleep(0.5)
    stored = d.thumbnail_files(fid)
    assert len(stored) < 40, f"{len(stored)} variant files stored for one image: {[p.name for p in stored][:10]}..."
