"""One write path: every write of an entity, built-in or not, runs the hook
chain, so the webhook outbox (a registered hook) sees sign-ups, profile
changes, account deletions and the threads the messaging hooks keep."""

import tempfile

from roost_harness import Roostd
from webhook_support import Receiver, config, user

EVENTS = ("users.created", "users.updated", "users.deleted", "threads.created", "threads.updated", "messages.created")


def test_profile_and_thread_writes_reach_the_webhook_outbox():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config(receiver.url, events=EVENTS)).start()
        try:
            alice, alice_token = user(roost, "alice")
            bob, bob_token = user(roost, "bob")
            assert roost.call("PATCH", f"/users/{alice}", {"name": "Alice A."}, alice_token).status == 200
            for text in ("hi", "again"):
                resp = roost.call("POST", "/messages", {"recipientId": bob, "text": text}, alice_token)
                status, body = resp.status, resp.body
                assert status == 201, body
            assert roost.call("DELETE", f"/users/{bob}", None, bob_token).status == 200
            thread = ":".join(sorted([alice, bob]))
            expected = [("users.created", alice), ("users.created", bob), ("users.updated", alice),
                        ("messages.created", None), ("threads.created", thread),
                        ("messages.created", None), ("threads.updated", thread), ("users.deleted", bob)]
            assert receiver.wait_for(lambda r: len(r.accepted()) >= len(expected)), roost.log_text()
            got = [(p["type"], p["data"].get("_id")) for _, p in receiver.accepted()]
            assert sorted(t for t, _ in got) == sorted(t for t, _ in expected), got
            for kind, entity in expected:
                if entity:
                    assert (kind, entity) in got, (kind, entity, got)
            updated = next(p for _, p in receiver.accepted() if p["type"] == "users.updated")
            assert updated["data"]["name"] == "Alice A."
            thread_update = next(p for _, p in receiver.accepted() if p["type"] == "threads.updated")
            assert thread_update["data"]["lastMessage"]["_type"] == "ref"
        finally:
            roost.stop()
            receiver.stop()


def test_a_put_body_id_must_be_the_urls_on_both_paths():
    """The one `_id` rule of a PUT (`checkBodyID`), whether the PUT creates
    the row or replaces it: absent or equal to the URL's, else 400 and
    nothing written."""
    from roost_harness import assert_error, running_roostd

    with running_roostd("default_permission: public\n") as roost:
        for path_id, creates in (("fresh", True), ("kept", False)):
            if not creates:
                assert roost.call("PUT", "/items/kept", {"n": 0}).status == 201
            assert_error(roost.call("PUT", f"/items/{path_id}", {"_id": "other", "n": 1}), 400, "InvalidDocument")
            assert roost.call("GET", "/items/other").status == 404
            if creates:
                assert roost.call("GET", f"/items/{path_id}").status == 404
            else:
                assert roost.call("GET", f"/items/{path_id}").body["n"] == 0
            r = roost.call("PUT", f"/items/{path_id}", {"_id": path_id, "n": 2})
            assert r.status == (201 if creates else 200), r
            r = roost.call("PUT", f"/items/{path_id}", {"n": 3})
            assert r.status == 200 and r.body["_id"] == path_id and r.body["n"] == 3, r
