"""Issue #23: referential integrity. Declared reference fields
(`collections.<name>.references`) keep a referenced entity from silently
vanishing: a delete of the target is refused (`restrict`), takes the
referencing entities with it (`cascade`) or clears the reference (`nullify`),
all in the delete's transaction and through the one write path (hooks,
webhooks, change feed). Writes that set a reference must name a target the
writer can read."""

import json
import urllib.parse

import pytest

from webhook_support import user
from references_support import admin, batch_create, count, create, exists, feed_cursor, ref, roost


# (mode, delete status, single referrer after, array referrer after)
MODES = [
    ("restrict", 409, "kept", "kept"),
    ("cascade", 200, "gone", "gone"),
    ("nullify", 200, None, "other-only"),
]


@pytest.mark.parametrize("mode,status,single_after,array_after", MODES)
def test_each_mode_with_single_references_and_arrays(roost, mode, status, single_after, array_after):
    target, other = create(roost, "targets", {"n": 1}), create(roost, "targets", {"n": 2})
    single = create(roost, f"r_{mode}", {"target": ref("targets", target)})
    array = create(roost, f"r_{mode}", {"target": [ref("targets", target), ref("targets", other)]})
    code, body = admin(roost, "DELETE", f"/targets/{target}")
    assert code == status, body
    assert exists(roost, "targets", target) == (status == 409)
    if mode == "restrict":
        assert body["error"] == "Referenced" and body["count"] == 2, body
    for id_, after in ((single, single_after), (array, array_after)):
        code, doc = admin(roost, "GET", f"/r_{mode}/{id_}")
        if after == "gone":
            assert code == 404
        elif after == "kept":
            assert doc["target"] in (ref("targets", target), [ref("targets", target), ref("targets", other)])
        elif after == "other-only":
            assert doc["target"] == [ref("targets", other)], doc
        else:
            assert code == 200 and "target" in doc and doc["target"] is None, doc


def test_restrict_counts_every_reference_and_clears_when_they_go(roost):
    target = create(roost, "targets", {})
    holders = [create(roost, "r_restrict", {"target": ref("targets", target)}) for _ in range(3)]
    code, body = admin(roost, "DELETE", f"/targets/{target}")
    assert (code, body["error"], body["count"]) == (409, "Referenced", 3), body
    assert admin(roost, "PATCH", f"/r_restrict/{holders[0]}", {"target": None})[0] == 200
    assert admin(roost, "DELETE", f"/r_restrict/{holders[1]}")[0] == 200
    assert admin(roost, "DELETE", f"/targets/{target}")[1]["count"] == 1
    assert admin(roost, "PUT", f"/r_restrict/{holders[2]}", {"other": True})[0] == 200
    assert admin(roost, "DELETE", f"/targets/{target}") == (200, {"count": 1})


BAD_VALUES = [
    ("a bare id", "some-id"),
    ("another collection", {"_type": "ref", "_collection": "authors", "_id": "x"}),
    ("not a ref", {"_collection": "targets", "_id": "x"}),
    ("empty id", {"_type": "ref", "_collection": "targets", "_id": ""}),
    ("array with a string", ["x"]),
    ("a number", 7),
]


@pytest.mark.parametrize("label,value", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_a_declared_field_holds_references_only(roost, label, value):
    code, body = admin(roost, "POST", "/r_cascade", {"target": value})
    assert (code, body["error"]) == (400, "InvalidDocument"), body
    assert "must be a reference" in body["description"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_writes_check_the_target_exists(roost, method):
    existing = create(roost, "r_nullify", {})
    path = "/r_nullify" if method == "POST" else f"/r_nullify/{existing}"
    code, body = admin(roost, method, path, {"target": ref("targets", "no-such-target")})
    assert code == 400 and body["error"] == "InvalidDocument", body
    assert body["description"] == 'target: no document with _id "no-such-target" in targets.'
    target = create(roost, "targets", {})
    assert admin(roost, method, path, {"target": [ref("targets", target)]})[0] in (200, 201)


def test_a_target_the_writer_cannot_read_looks_missing(roost):
    alice_id, alice = user(roost, "refalice")
    _, bob = user(roost, "refbob")
    secret = create(roost, "secrets", {"pin": 1234}, alice)
    assert roost.call("GET", f"/secrets/{secret}", None, bob).status == 404
    hidden = roost.call("POST", "/notes", {"secret": ref("secrets", secret)}, bob)
    assert roost.call("POST", "/notes", {"secret": ref("secrets", secret)}, alice).status == 201
    assert roost.call("DELETE", f"/secrets/{secret}", None, alice).body["error"] == "Referenced"
    # The same id once it is really gone: byte-for-byte the same answer.
    note = roost.call("GET", "/notes?query=" + urllib.parse.quote(json.dumps({"secret._id": secret})), None, alice).body[0]
    assert roost.call("DELETE", f"/notes/{note['_id']}", None, alice).status == 200
    assert roost.call("DELETE", f"/secrets/{secret}", None, alice).status == 200
    missing = roost.call("POST", "/notes", {"secret": ref("secrets", secret)}, bob)
    assert (hidden.status, hidden.body) == (missing.status, missing.body) and hidden.status == 400, (hidden, missing)


def test_deleting_a_user_cascades_to_what_references_them(roost):
    carol_id, carol = user(roost, "refcarol")
    notes = [create(roost, "notes", {"owner": ref("users", carol_id), "i": i}, carol) for i in range(2)]
    assert roost.call("DELETE", f"/users/{carol_id}", None, carol).status == 200
    assert not any(exists(roost, "notes", n) for n in notes)
    code, body = admin(roost, "POST", "/notes", {"owner": ref("users", carol_id)})
    assert code == 400 and "no document" in body["description"]


def test_cascade_and_nullify_fire_hooks_webhooks_and_the_change_feed(roost):
    author = create(roost, "authors", {"name": "A"})
    posts = [create(roost, "posts", {"author": ref("authors", author)}) for _ in range(2)]
    comments = [create(roost, "comments", {"post": ref("posts", p)}) for p in posts for _ in range(2)]
    target = create(roost, "targets", {})
    nulled = create(roost, "r_nullify", {"target": ref("targets", target)})
    cursors = {c: feed_cursor(roost, c) for c in ("posts", "comments", "r_nullify")}
    assert admin(roost, "DELETE", f"/authors/{author}")[0] == 200
    assert admin(roost, "DELETE", f"/targets/{target}")[0] == 200
    for collection, gone in (("posts", posts), ("comments", comments)):
        code, page = admin(roost, "GET", f"/{collection}/_deltaset?since={urllib.parse.quote(cursors[collection])}")
        assert sorted(d["_id"] for d in page["deleted"]) == sorted(gone), page
    code, page = admin(roost, "GET", f"/r_nullify/_deltaset?since={urllib.parse.quote(cursors['r_nullify'])}")
    assert [(d["_id"], d["target"]) for d in page["changed"]] == [(nulled, None)], page
    expected = {("authors.deleted", author), ("r_nullify.updated", nulled)}
    expected |= {("posts.deleted", p) for p in posts} | {("comments.deleted", c) for c in comments}
    receiver = roost.receiver
    got = lambda: {(p["type"], p["data"].get("_id")) for _, p in receiver.accepted()}
    assert receiver.wait_for(lambda r: expected <= got()), (expected - got(), roost.log_text()[-2000:])


def test_a_hook_refusing_a_cascaded_write_undoes_the_whole_delete(roost):
    """`messaging.immutable` refuses any rewrite of a sent message: the
    nullify of a message's `spot` runs that hook, so the delete fails whole."""
    _, dan = user(roost, "refdan")
    erin_id, _ = user(roost, "referin")
    target = create(roost, "targets", {})
    message = roost.call("POST", "/messages", {"recipientId": erin_id, "text": "here", "spot": ref("targets", target)}, dan)
    assert message.status == 201, message.body
    code, body = admin(roost, "DELETE", f"/targets/{target}")
    assert code == 403 and "cannot be replaced" in body["description"], body
    assert exists(roost, "targets", target)
    assert admin(roost, "GET", f"/messages/{message.body['_id']}")[1]["spot"] == ref("targets", target)


def test_the_cascade_bound_refuses_and_changes_nothing(roost):
    target = create(roost, "targets", {})
    batch_create(roost, "bulk", [{"target": ref("targets", target)} for _ in range(51)])
    before = count(roost, "bulk")
    code, body = admin(roost, "DELETE", f"/targets/{target}")
    assert (code, body["error"], body["limit"]) == (409, "CascadeTooLarge", 50), body
    assert body["count"] >= 51
    assert exists(roost, "targets", target) and count(roost, "bulk") == before
    # At the bound exactly, it goes through.
    assert admin(roost, "DELETE", f"/bulk/{admin(roost, 'GET', '/bulk?limit=1')[1][0]['_id']}")[0] == 200
    assert admin(roost, "DELETE", f"/targets/{target}")[0] == 200
    assert count(roost, "bulk") == before - 51
