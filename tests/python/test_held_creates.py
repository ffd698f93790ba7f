"""Creates from many clients at once share the writer's group commits (on
PostgreSQL the writer holds a batch's creates and sends them many rows to
an INSERT). Each create must still get the answer it would get alone: a
taken `_id` or a value too large for an index fails that create only,
never its neighbours in the batch; of two creates of one new `_id` exactly
one wins; ids that are equal in Unicode but not in bytes are two ids; and
in `/_batch` the failing operation is named and nothing of it is applied.
Runs on both engines (`make test-python-postgresql`)."""

import concurrent.futures
import random
import string

import pytest

from roost_harness import FAST_HASHING, engine, running_roostd

CONFIG = FAST_HASHING + """collections:
  items:
    permission: public
    indexes: [tag]
"""

_rng = random.Random(11)
BIG = "".join(_rng.choice(string.ascii_letters) for _ in range(6000))  # incompressible
TAKEN = [f"taken-{i}" for i in range(10)]


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        for id in TAKEN:
            assert d.call("POST", "/items", {"_id": id, "n": -1}).status == 201
        yield d


def count(roost):
    return roost.call("GET", "/items/_count").body["count"]


def test_concurrent_creates_each_get_their_own_answer(roost):
    before = count(roost)
    # (body, what it must get): "ok" 201, "taken" 409, "dup" one of a pair wins, "big" the index's refusal on PostgreSQL.
    jobs = [({"tag": "ok", "n": i}, "ok") for i in range(150)]
    jobs += [({"_id": id, "n": 1}, "taken") for id in TAKEN]
    jobs += [({"_id": f"dup-{k}", "n": side}, "dup") for k in range(10) for side in (1, 2)]
    jobs += [({"tag": BIG, "n": i}, "big") for i in range(10)]
    jobs += [({"_id": "caf\u00e9", "n": 7}, "ok"), ({"_id": "cafe\u0301", "n": 8}, "ok")]
    random.Random(5).shuffle(jobs)
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(lambda job: roost.call("POST", "/items", job[0]), jobs))

    created = []
    dup_winners = {}
    for (body, kind), r in zip(jobs, answers):
        assert r.status < 500, (body.get("_id"), r)
        if kind == "ok" or (kind == "big" and engine.name() == "sqlite"):
            assert r.status == 201, (body.get("_id"), r)
        elif kind == "taken":
            assert r.status == 409 and r.body["error"] == "Conflict", r
        elif kind == "big":
            assert r.status == 400 and "index" in r.body["description"], r
        elif kind == "dup":
            assert r.status in (201, 409), r
            if r.status == 201:
                assert body["_id"] not in dup_winners, ("two creates of one _id both won", body)
                dup_winners[body["_id"]] = body["n"]
        if r.status == 201:
            created.append((r.body["_id"], body["n"]))
    assert sorted(dup_winners) == [f"dup-{k}" for k in range(10)], dup_winners
    # Every 201 is stored as answered, and nothing else is.
    assert count(roost) == before + len(created)
    for id, n in created:
        got = roost.call("GET", "/items/" + id.replace("\u0301", "%CC%81").replace("\u00e9", "%C3%A9"))
        assert got.status == 200 and got.body["n"] == n, (id, got)
    for id in TAKEN:
        assert roost.call("GET", f"/items/{id}").body["n"] == -1


@pytest.mark.parametrize("operations, failing", [
    ([{"_id": "taken-0"}, {"_id": "fresh-a"}], 0),
    ([{"_id": "fresh-b"}, {"_id": "taken-0"}], 1),
    ([{"_id": "fresh-c"}, {"_id": "fresh-c"}], 1),
    ([{"_id": "fresh-d"}, {"_id": "fresh-e", "tag": BIG}], 1),
])
def test_a_batch_names_its_failing_create_and_applies_nothing(roost, operations, failing):
    before = count(roost)
    r = roost.call("POST", "/_batch", {"operations": [{"method": "POST", "path": "/items", "body": body} for body in operations]})
    if engine.name() == "sqlite" and "tag" in operations[failing]:
        assert r.status == 200, r  # SQLite's value index holds any length
        return
    assert r.status in (400, 409), r
    assert r.body["operation"] == failing and f"Operation {failing} failed" in r.body["description"], r
    assert count(roost) == before
    for body in operations:
        if body["_id"].startswith("fresh"):
            assert roost.call("GET", "/items/" + body["_id"]).status == 404


@pytest.mark.parametrize("operations, failing", [
    # a held create's refusal is named before a later operation's own failure
    ([("POST", "/items", {"_id": "taken-1"}), ("PATCH", "/items/absent-1", {"n": 1})], 0),
    # of several refused creates, the first is named
    ([("POST", "/items", {"_id": "fresh-m"}), ("POST", "/items", {"_id": "taken-2"}), ("POST", "/items", {"_id": "taken-3"})], 1),
    # a create seen by a later operation of the batch, then a refused one
    ([("POST", "/items", {"_id": "fresh-n"}), ("PUT", "/items/fresh-n", {"n": 2}), ("POST", "/items", {"_id": "taken-4"})], 2),
    ([("POST", "/items", {"_id": "fresh-o"}), ("DELETE", "/items/fresh-o", None), ("PATCH", "/items/fresh-o", {"n": 3})], 2),
])
def test_a_batch_of_held_creates_names_the_first_failure(roost, operations, failing):
    before = count(roost)
    ops = [dict({"method": m, "path": p}, **({"body": b} if b is not None else {})) for m, p, b in operations]
    r = roost.call("POST", "/_batch", {"operations": ops})
    assert r.status in (400, 404, 409), r
    assert r.body["operation"] == failing and f"Operation {failing} failed" in r.body["description"], r
    assert count(roost) == before
    for m, p, b in operations:
        if m == "POST" and b["_id"].startswith("fresh"):
            assert roost.call("GET", "/items/" + b["_id"]).status == 404


def test_a_batch_of_creates_is_seen_by_its_later_operations(roost):
    """Creates held for one INSERT are there for the batch's later reads and writes, and each answer is its own."""
    ops = [{"method": "POST", "path": "/items", "body": {"_id": f"seen-{i}", "n": i}} for i in range(30)]
    ops += [{"method": "PATCH", "path": "/items/seen-3", "body": {"n": 33}},
            {"method": "DELETE", "path": "/items/seen-4"},
            {"method": "POST", "path": "/items", "body": {"_id": "seen-4", "n": 44}},
            {"method": "PUT", "path": "/items/seen-5", "body": {"n": 55}}]
    r = roost.call("POST", "/_batch", {"operations": ops})
    assert r.status == 200, r
    results = r.body["results"]
    assert [x["status"] for x in results] == [201] * 30 + [200, 200, 201, 200], results
    # an entity written again later in the batch is answered once, by its last operation
    assert [x["body"] and x["body"]["_id"] for x in results[:30]] == [None if i in (3, 4, 5) else f"seen-{i}" for i in range(30)]
    got = {i: roost.call("GET", f"/items/seen-{i}").body["n"] for i in range(30)}
    assert got == {i: {3: 33, 4: 44, 5: 55}.get(i, i) for i in range(30)}, got
