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
