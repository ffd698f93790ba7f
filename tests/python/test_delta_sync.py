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

Edge cases (3) are in test_delta_sync_edges.py, conditional writes (4) in
test_delta_sync_etags.py, shared fixtures in delta_sync_support.py. The kill -9
side of the feed is in tests/drills/crash.py (test_drills_quick).
"""

import collections
import json
import random
import threading
import time
import uuid

import pytest

from delta_sync_support import (
    LIMITS,
    QUERIES,
    SyncClient,
    TAGS,
    World,
    _seeds,
    full_list,
    node,
    people,
    qid,
)


# ---------------------------------------------------------------------------------------------
# 1. Randomised convergence
@pytest.mark.parametrize("level,seed", [("private", s) for s in _seeds(1501)] + [("shared", s) for s in _seeds(2602)])
def test_random_convergence(node, level, seed):
    """prvSync is shared by every private run (other runs' rows are invisible
    extras there); each shared run gets a collection of its own."""
    rng = random.Random(seed)
    private = level == "private"
    coll = "prvSync" if private else f"shrSync{seed}x{uuid.uuid4().hex[:4]}"
    users = [node.new_user(f"u{k}") for k in range(4)]
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
