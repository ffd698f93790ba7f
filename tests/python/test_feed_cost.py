"""The change feed costs about what changed, and a batch answers about what it
changed (issue #33): an update of a large entity keeps a reverse merge patch
in `_changes.prev_doc`, not the whole earlier entity, and a `/_batch` of many
operations on one entity carries that entity once. Every earlier state must
still come back byte for byte where the feed is read: live streams resumed
with `Last-Event-ID` (each event's entity as that change committed it, and
enter/leave judged on the state before), delta sync's deletions judged on the
`_acl` an entity had at the cursor. Runs on both engines
(`make test-python-postgresql`)."""

import os
import random
import time
import uuid

import pytest

from drills.common import ADMIN_TOKEN
from drills.live import LiveStream, live_path
from roost_harness import FAST_HASHING, cursors, engine, random_letters, running_roostd

CONFIG = FAST_HASHING + f"""admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
collections:
  big: {{permission: public}}
  notes: {{permission: private}}
"""

_rng = random.Random(33)


def blob(n):
    return random_letters(_rng, n)


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        cursors.register(d.data_dir)
        yield d


def feed_bytes(roost):
    return int(engine.sql(roost.data_dir, "SELECT coalesce(sum(length(prev_doc)), 0) FROM _changes")[0][0])


def disk_bytes(roost):
    if engine.name() != "sqlite":
        return 0
    return sum(os.path.getsize(os.path.join(roost.data_dir, f)) for f in os.listdir(roost.data_dir)
               if f.startswith("roost.db"))


def batch(roost, ops, token=None):
    r = roost.call("POST", "/_batch", {"operations": ops}, token=token, timeout=60)
    assert r.status == 200, r
    return r


def replay(roost, path, last_event_id, _id, n, timeout=120):
    """The first `n` events for `_id` after `last_event_id`, resuming with
    `Last-Event-ID` whenever the daemon drops the stream (a backlog past
    `live_buffer_bytes`), as a client does."""
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        stream = LiveStream(roost.port, path, last_event_id=last_event_id)
        stream.wait(lambda s: s.end or sum(1 for e in s.events if e.entity_id == _id) + len(got) >= n, 10)
        events = stream.snapshot()
        stream.close()
        if events:
            last_event_id = events[-1].id
        got += [e for e in events if e.entity_id == _id]
    assert len(got) >= n, got
    return got[:n]


# Shapes of a large entity and of the change made to it, each rebuilt exactly.
CHANGES = [
    ("one field", {"n": 0}, lambda i: {"n": i}),
    ("nested field", {"deep": {"a": {"b": 0}, "keep": "x"}}, lambda i: {"deep": {"a": {"b": i}}}),
    ("field added then removed", {"n": 0}, lambda i: {"extra": i} if i % 2 else {"extra": None}),
    ("array replaced", {"arr": [1, 2, 3]}, lambda i: {"arr": list(range(i % 5))}),
    ("null member unchanged", {"maybe": None, "n": 0}, lambda i: {"n": i}),
    ("null member changed (kept whole once)", {"maybe": None, "n": 0}, lambda i: {"maybe": i}),
    ("object made scalar", {"o": {"x": 1}}, lambda i: {"o": i} if i % 2 else {"o": {"x": i, "y": None}}),
]


@pytest.mark.parametrize("name,extra,patch", CHANGES, ids=[c[0] for c in CHANGES])
def test_patches_of_a_large_entity_cost_what_changed_and_replay_exactly(roost, name, extra, patch):
    _id = "big-" + uuid.uuid4().hex[:8]
    size = 60_000
    start_stream = LiveStream(roost.port, live_path("big"))
    assert start_stream.wait_ready(10)
    r = roost.call("POST", "/big", {"_id": _id, "blob": blob(size), **extra})
    assert r.status == 201, r
    created = r.body
    # the create's event: the cursor a client would resume from
    assert start_stream.wait(lambda s: any(e.entity_id == _id for e in s.events), 10), start_stream.snapshot()
    resume_from = [e for e in start_stream.snapshot() if e.entity_id == _id][-1].id
    start_stream.close()

    feed0, disk0 = feed_bytes(roost), disk_bytes(roost)
    states = [created]
    ops = [{"method": "PATCH", "path": f"/big/{_id}", "body": patch(i)} for i in range(1, 21)]
    for chunk in (ops[:10], ops[10:]):
        answer = batch(roost, chunk)
        # the entity once per answer, not once per operation
        assert len(answer.raw) < 2 * size, len(answer.raw)
        results = answer.body["results"]
        assert all(x["status"] == 200 for x in results), results[:2]
        assert all(x["body"] is None and x["omitted"] == "superseded" for x in results[:-1])
        assert results[-1]["body"]["_id"] == _id and results[-1]["etag"]
        # each earlier state, as the following GETs of the feed must rebuild it
    feed_growth = feed_bytes(roost) - feed0
    if name == "null member changed (kept whole once)":
        # a merge patch cannot restore a null member: the first change keeps the whole entity
        assert size <= feed_growth < size + 20 * 2000, feed_growth
    else:
        assert feed_growth < 20 * 2000, feed_growth   # whole copies would be 20 × 60 KB = 1.2 MB
        if engine.name() == "sqlite":
            assert disk_bytes(roost) - disk0 < 8 * size * 2, (disk0, disk_bytes(roost))

    # Ground truth: every state, from the replayed stream, must follow from applying the patches in turn.
    def merge(target, p):
        if not isinstance(p, dict):
            return p
        out = dict(target) if isinstance(target, dict) else {}
        for k, v in p.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(out.get(k), v)
        return out

    events = replay(roost, live_path("big"), resume_from, _id, 20)
    state = {k: v for k, v in created.items()}
    for i, e in enumerate(events, start=1):
        assert e.kind == "update", e
        got = e.entity
        want = merge(state, patch(i))
        strip = lambda d: {k: v for k, v in d.items() if k != "_updatedAt"}  # noqa: E731
        assert strip(got) == strip(want), (i, {k: got.get(k) for k in got if k != "blob"})
        assert list(got.keys())[:1] == ["_id"]
        state = got
    final = roost.call("GET", f"/big/{_id}").body
    assert final == state


def test_delta_deletion_is_judged_on_the_acl_at_the_cursor(roost):
    alice_id, alice_token = roost.new_user("alice")
    bob_id, bob_token = roost.new_user("bob")
    _id = f"{alice_id}:{uuid.uuid4().hex[:8]}"
    r = roost.call("PUT", f"/notes/{_id}", {"blob": blob(200_000), "n": 0, "_acl": {"read": [bob_id]}}, token=alice_token)
    assert r.status in (200, 201), r
    first = roost.call("GET", "/notes/_deltaset", token=bob_token)
    assert first.status == 200 and [d["_id"] for d in first.body["changed"]] == [_id], first
    cursor = first.body["cursor"]
    # many small updates, then bob loses read, then more updates: only the state at the cursor counts
    batch(roost, [{"method": "PATCH", "path": f"/notes/{_id}", "body": {"n": i}} for i in range(1, 11)], alice_token)
    batch(roost, [{"method": "PATCH", "path": f"/notes/{_id}", "body": {"_acl": {"read": []}}}]
          + [{"method": "PATCH", "path": f"/notes/{_id}", "body": {"n": i}} for i in range(11, 20)], alice_token)
    delta = roost.call("GET", "/notes/_deltaset?since=" + cursor, token=bob_token)
    assert delta.status == 200, delta
    assert delta.body["changed"] == []
    assert [d["_id"] for d in delta.body["deleted"]] == [_id], delta.body
    # a stranger who never could read it learns nothing
    _, carol_token = roost.new_user("carol")
    c0 = roost.call("GET", "/notes/_deltaset", token=carol_token).body
    assert c0["changed"] == []


def test_a_batch_over_many_large_entities_answers_within_its_budget(roost):
    ids = []
    for _ in range(12):
        r = roost.call("POST", "/big", {"blob": blob(1_000_000 - 200)})
        assert r.status == 201, r
        ids.append(r.body["_id"])
    answer = batch(roost, [{"method": "PATCH", "path": f"/big/{i}", "body": {"touched": True}} for i in ids])
    results = answer.body["results"]
    assert len(answer.raw) < 9 * 1024 * 1024, len(answer.raw)
    carried = [x for x in results if x["body"] is not None]
    omitted = [x for x in results if x["body"] is None]
    assert carried and omitted and all(x["omitted"] == "size" and x["etag"] for x in omitted)
    for x, i in zip(results, ids):
        assert x["status"] == 200
        now = roost.call("GET", f"/big/{i}")
        assert now.body["touched"] is True and now.headers.get("etag") == x["etag"]
