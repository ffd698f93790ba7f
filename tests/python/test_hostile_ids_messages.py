"""Hostile review (issue #14), sections 2 to 4: a private row's existence through
a client-chosen `_id`, thread squatting, and forged senders of messages."""

import uuid

import pytest

from hostile_support import q
from hostile_world import normalized, observed, run_probes, uniq, world


# ===========================================================================
# 2. Existence through a client-chosen _id in a private collection.

@pytest.fixture(scope="module")
def ids_world(world):
    a = world.uid("alice")
    r = world.call("alice", "POST", "/prvIds", {"_id": f"{a}:secret", "v": "alice's"})
    assert r.status == 201, r
    r = world.call("admin", "POST", "/prvIds", {"_id": "plain-taken", "v": "admin's"})
    assert r.status == 201, r  # the admin token is exempt from the namespace rule
    return world


def foreign_ids(w):
    """(taken id, free id) pairs bob cannot see: alice's namespace, and plain ids."""
    a = w.uid("alice")
    return [(f"{a}:secret", f"{a}:free"), ("plain-taken", "plain-free")]


def test_post_with_a_foreign_id_is_the_same_400_whether_taken_or_not(ids_world):
    w = ids_world
    b = w.uid("bob")
    for taken, free in foreign_ids(w):
        rt = w.call("bob", "POST", "/prvIds", {"_id": taken, "v": "bob's"})
        rf = w.call("bob", "POST", "/prvIds", {"_id": free, "v": "bob's"})
        assert rt.status == 400 and rt.body["error"] == "InvalidDocument", (taken, rt)
        assert normalized(rt, taken) == normalized(rf, free), (taken, free)
    # Near misses of bob's own namespace are refused the same way.
    for near in (b, f"{b}x:1", f"x{b}:1", f"{b.upper()}:1" if b.upper() != b else f" {b}:1"):
        r = w.call("bob", "POST", "/prvIds", {"_id": near, "v": "bob's"})
        assert r.status == 400 and r.body["error"] == "InvalidDocument", (near, r)
    assert w.call("admin", "GET", f"/prvIds/{w.uid('alice')}:secret").body["v"] == "alice's"
    assert w.call("admin", "GET", f"/prvIds/{w.uid('alice')}:free").status == 404
    assert w.call("admin", "GET", "/prvIds/plain-free").status == 404


def test_own_namespace_ids_work(ids_world):
    w = ids_world
    b = w.uid("bob")
    r = w.call("bob", "POST", "/prvIds", {"_id": f"{b}:note", "v": 1})
    assert r.status == 201, r
    assert w.call("bob", "POST", "/prvIds", {"_id": f"{b}:note", "v": 2}).status == 409  # his own row: fine to say
    assert w.call("bob", "PUT", f"/prvIds/{b}:put-new", {"v": 1}).status == 201
    assert w.call("bob", "PUT", f"/prvIds/{b}:put-new", {"v": 2}).status == 200


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_writes_to_an_invisible_id_answer_like_an_absent_id(ids_world, method):
    w = ids_world
    for taken, free in foreign_ids(w):
        body = None if method == "DELETE" else {"v": "bob was here"}
        rt = w.call("bob", method, f"/prvIds/{taken}", body)
        rf = w.call("bob", method, f"/prvIds/{free}", body)
        assert rt.status == 404, (method, taken, rt)
        assert normalized(rt, taken) == normalized(rf, free), (method, taken, free)
        assert w.call("admin", "GET", f"/prvIds/{free}").status == 404  # PUT did not create it
    assert w.call("admin", "GET", f"/prvIds/{w.uid('alice')}:secret").body["v"] == "alice's"
    assert w.call("admin", "GET", "/prvIds/plain-taken").body["v"] == "admin's"


def test_admin_is_exempt_from_the_id_namespace(ids_world):
    w = ids_world
    assert w.call("admin", "POST", "/prvIds", {"_id": uniq("admin-any-")}).status == 201
    assert w.call("admin", "PUT", f"/prvIds/{uniq('admin-put-')}", {"v": 1}).status == 201


# ===========================================================================
# 3. Threads are written only by the messaging hooks.

def thread_writes(w, actor, tid):
    """Every client write on /threads, for the pair's id and ids of the actor's own."""
    own = f"{w.uid(actor)}:{uniq('squat')}"
    return [
        ("POST", "/threads", {"_id": tid, "participants": tid.split(":")}),
        ("POST", "/threads", {"participants": tid.split(":")}),
        ("POST", "/threads", {"_id": own}),
        ("PUT", f"/threads/{tid}", {"participants": tid.split(":"), "_acl": {"read": [w.uid(actor)]}}),
        ("PUT", f"/threads/{own}", {"x": 1}),
        ("PATCH", f"/threads/{tid}", {"lastMessage": None, "_acl": {"read": [w.uid(actor)] * 1000}}),
        ("DELETE", f"/threads/{tid}", None),
    ]


def test_clients_cannot_create_squat_or_change_threads(world):
    tid = world.thread_id("erin", "dave")
    for phase in ("before erin writes to dave", "after"):
        before = world.call("admin", "GET", f"/threads/{tid}").raw
        for actor in ("carol", "erin", "dave"):
            for method, path, body in thread_writes(world, actor, tid):
                r = world.call(actor, method, path, body)
                assert r.status == 403, (phase, actor, method, path, r)
        assert world.call("admin", "GET", f"/threads/{tid}").raw == before, phase
        if phase.startswith("before"):
            assert world.call("admin", "GET", f"/threads/{tid}").status == 404
            world.send("erin", "dave", "hello dave")


def test_a_stranger_cannot_learn_that_two_users_talk(world):
    pair = ("frank", "grace")
    tid = world.thread_id(*pair)
    probes = [f"/threads/{tid}", f"/threads/{tid}?resolve=lastMessage", f"/threads?count=true&query={q({'_id': tid})}",
              f"/threads/_count?query={q({'participants': world.uid('frank')})}"]
    writes = [("POST", "/threads", {"_id": tid}), ("PUT", f"/threads/{tid}", {"x": 1}),
              ("PATCH", f"/threads/{tid}", {"x": 1}), ("DELETE", f"/threads/{tid}", None)]

    def answers():
        # Reads, and the writes a squatter would try (a 201 before and a 409 after would tell).
        return run_probes(world, "carol", probes) + [(f"{m} {p}", observed(world.call("carol", m, p, b)))
                                                     for m, p, b in writes]
    before = answers()
    assert before[0][1][0] == 404
    world.send("frank", "grace", "hi grace")
    after = answers()
    assert before == after


def test_sending_messages_still_creates_and_updates_the_thread(world):
    pair = ("heidi", "ivan")
    tid = world.thread_id(*pair)
    m1 = world.send("heidi", "ivan", "first")
    assert m1["threadId"] == tid
    for who in pair:
        r = world.call(who, "GET", f"/threads/{tid}")
        assert r.status == 200, (who, r)
        assert r.body["lastMessage"] == {"_type": "ref", "_collection": "messages", "_id": m1["_id"]}
        assert sorted(r.body["participants"]) == sorted(world.uid(p) for p in pair)
    m2 = world.send("ivan", "heidi", "second")
    r = world.call("heidi", "GET", "/threads?resolve=lastMessage")
    mine = [t for t in r.body if t["_id"] == tid]
    assert len(mine) == 1 and mine[0]["lastMessage"]["_id"] == m2["_id"] and mine[0]["lastMessage"]["text"] == "second"
    assert world.call("carol", "GET", f"/threads/{tid}").status == 404


# ===========================================================================
# 4. Messages are immutable except the sender's text.

@pytest.fixture
def message(world):
    return world.send("alice", "dave", f"original {uuid.uuid4().hex[:6]}")


def test_forged_sender_patch_from_the_issue_is_refused(world, message):
    r = world.call("alice", "PATCH", f"/messages/{message['_id']}",
                   {"senderId": world.uid("carol"), "text": "I owe you $100"})
    assert r.status == 400 and r.body["error"] == "InvalidDocument", r
    seen = world.call("dave", "GET", f"/messages/{message['_id']}").body
    assert seen["senderId"] == world.uid("alice") and seen["text"] == message["text"]


def test_sender_may_edit_the_text_and_gets_edited_at(world, message):
    r = world.call("alice", "PATCH", f"/messages/{message['_id']}", {"text": "edited"})
    assert r.status == 200, r
    assert r.body["text"] == "edited" and isinstance(r.body.get("editedAt"), str)
    seen = world.call("dave", "GET", f"/messages/{message['_id']}").body
    assert seen["text"] == "edited"
    for key in ("senderId", "recipients", "threadId", "_acl", "_createdAt"):
        assert seen[key] == message[key], key


IMMUTABLE_PATCHES = {
    "senderId": lambda w: w.uid("carol"),
    "recipients": lambda w: [w.uid("carol")],
    "recipientId": lambda w: w.uid("carol"),
    "threadId": lambda w: w.thread_id("alice", "carol"),
    "_acl": lambda w: {"read": [w.uid("carol")]},
    "editedAt": lambda w: "2000-01-01T00:00:00.000Z",
    "extra": lambda w: "any other field",
}


@pytest.mark.parametrize("field", list(IMMUTABLE_PATCHES))
@pytest.mark.parametrize("with_text", [True, False], ids=["with-text", "alone"])
def test_patching_anything_but_text_is_refused(world, message, field, with_text):
    body = {field: IMMUTABLE_PATCHES[field](world)}
    if with_text:
        body["text"] = "I owe you $100"
    before = world.call("dave", "GET", f"/messages/{message['_id']}").raw
    r = world.call("alice", "PATCH", f"/messages/{message['_id']}", body)
    assert r.status == 400 and r.body["error"] == "InvalidDocument", (body, r)
    assert world.call("dave", "GET", f"/messages/{message['_id']}").raw == before


def test_put_on_messages_is_forbidden_for_non_admins(world, message):
    mid = message["_id"]
    before = world.call("admin", "GET", f"/messages/{mid}").raw
    body = {"recipientId": world.uid("dave"), "senderId": world.uid("alice"), "text": "replaced"}
    for who in ("alice", "dave"):
        r = world.call(who, "PUT", f"/messages/{mid}", body)
        assert r.status == 403, (who, r)
    # A stranger: refused, and exactly as for an id that does not exist (403 by
    # rule 4, or 404 by rule 2's "invisible = absent"; see the report).
    rs = world.call("carol", "PUT", f"/messages/{mid}", body)
    absent = "0123456789abcdef01234567"
    ra = world.call("carol", "PUT", f"/messages/{absent}", body)
    assert rs.status in (403, 404), rs
    assert normalized(rs, mid) == normalized(ra, absent)
    # PUT of a new id in the caller's own namespace is a create (an offline
    # client's idempotent send): it runs every create rule, so a forged sender
    # is still refused, and a second PUT of the same id is a replace: 403.
    own = f"{world.uid('carol')}:{uniq('m')}"
    forged = world.call("carol", "PUT", f"/messages/{own}", body)
    assert forged.status == 403, forged
    assert world.call("admin", "GET", f"/messages/{own}").status == 404
    r = world.call("carol", "PUT", f"/messages/{own}", {**body, "senderId": world.uid("carol")})
    assert r.status == 201 and r.body["senderId"] == world.uid("carol"), r
    again = world.call("carol", "PUT", f"/messages/{own}", {**body, "senderId": world.uid("carol"), "text": "changed"})
    assert again.status == 403, again
    assert world.call("admin", "GET", f"/messages/{own}").body["text"] == "replaced"
    assert world.call("admin", "GET", f"/messages/{mid}").raw == before


def test_recipient_patch_is_403_and_stranger_patch_is_404_like_an_absent_id(world, message):
    mid = message["_id"]
    assert world.call("dave", "PATCH", f"/messages/{mid}", {"text": "rewritten by dave"}).status == 403
    rs = world.call("carol", "PATCH", f"/messages/{mid}", {"text": "rewritten by carol"})
    absent = "0123456789abcdef01234567"
    ra = world.call("carol", "PATCH", f"/messages/{absent}", {"text": "rewritten by carol"})
    assert rs.status == 404, rs
    assert normalized(rs, mid) == normalized(ra, absent)
    assert world.call("dave", "GET", f"/messages/{mid}").body["text"] == message["text"]
