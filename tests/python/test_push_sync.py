"""Silent sync pushes: a change in a `push_sync: true` collection wakes
the sync devices of exactly the users who may read it (the live streams'
rule: ACLs and the collection's level), as an APNs background push
(content-available, priority 5, collapse id) or an FCM data message,
coalesced per device to `push.sync_interval`."""

import json
import tempfile
import time
from pathlib import Path

import pytest

from push_support import Provider, config, env, push_world, register, user
from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, engine

COLLECTIONS = """collections:
  notes:
    permission: private
    push_sync: true
  tasks:
    permission: shared
    push_sync: true
  drafts:
    permission: shared
"""


@pytest.fixture
def world():
    with push_world(COLLECTIONS, sync_interval=2) as w:
        yield w


def background(provider, token):
    with provider.lock:
        return [r for r in provider.requests if r["token"] == token and r["status"] == 200]


def test_sync_push_wakes_only_readers_and_is_coalesced(world):
    provider, roost = world
    alice, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    carol, carol_token = user(roost, "carol")
    dave, dave_token = user(roost, "dave")
    register(roost, alice_token, "sync-alice", sync=True)
    register(roost, bob_token, "sync-bob", sync=True)
    register(roost, carol_token, "sync-carol", sync=True)
    register(roost, carol_token, "sync-pixel-carol", platform="android", sync=True)
    register(roost, dave_token, "nosync-dave")  # no sync: never woken
    time.sleep(1.2)  # the fan-out reads the devices at most once a second

    # a private note shared with bob: alice (its creator) and bob may read it
    resp = roost.call("POST", "/notes", {"title": "for bob", "_acl": {"read": [bob]}}, alice_token)
    assert resp.status == 201, resp.body
    assert provider.wait_for(lambda p: background(p, "sync-bob") and background(p, "sync-alice")), roost.log_text()
    time.sleep(0.5)
    assert not background(provider, "sync-carol") and not background(provider, "sync-pixel-carol")
    assert not [r for r in provider.requests if r["token"] == "nosync-dave"]
    push = background(provider, "sync-bob")[0]
    h = push["headers"]
    assert h["apns-push-type"] == "background" and h["apns-priority"] == "5" and h["apns-collapse-id"] == "roost-sync"
    assert push["payload"] == {"aps": {"content-available": 1}, "roost": {"sync": ["notes"]}}

    # a write nobody else may read wakes only its writer; a collection without push_sync wakes nobody
    before = len(provider.requests)
    assert roost.call("POST", "/drafts", {"x": 1}, alice_token).status == 201
    time.sleep(1)
    assert len(provider.requests) == before

    # a shared collection: every user may read it, so every sync device wakes,
    # each at most once per interval however many writes come
    time.sleep(2)
    start = time.time()
    for i in range(30):
        assert roost.call("POST", "/tasks", {"n": i}, dave_token).status == 201
    assert roost.call("POST", "/notes", {"title": "bob's own"}, bob_token).status == 201
    assert provider.wait_for(lambda p: len(background(p, "sync-carol")) >= 1 and len(background(p, "sync-pixel-carol")) >= 1)
    time.sleep(4.5 - (time.time() - start))
    elapsed = time.time() - start
    for token in ("sync-bob", "sync-carol", "sync-pixel-carol", "sync-alice"):
        assert 1 <= len([r for r in provider.requests[before:] if r["token"] == token]) <= int(elapsed / 2) + 1, (token, elapsed)
    # bob's pushes since then named tasks and (his own note) notes, coalesced
    named = set()
    for r in [r for r in provider.requests[before:] if r["token"] == "sync-bob"]:
        named.update(r["payload"]["roost"]["sync"])
    assert named == {"tasks", "notes"}
    fcm = [r for r in provider.requests if r["token"] == "sync-pixel-carol"][0]["payload"]
    assert "notification" not in fcm and fcm["android"]["priority"] == "NORMAL" and fcm["android"]["collapse_key"] == "roost-sync"
    assert json.loads(fcm["data"]["roost"]) == {"sync": ["tasks"]}
    assert not provider.errors, provider.errors


def test_a_waiting_sync_push_survives_kill9(world):
    provider, roost = world
    alice, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "sync-bob", sync=True)
    time.sleep(1.2)
    assert roost.call("POST", "/notes", {"title": "one", "_acl": {"read": [bob]}}, alice_token).status == 201
    assert provider.wait_for(lambda p: len(background(p, "sync-bob")) == 1)
    time.sleep(0.8)  # the position after the first push is saved
    # the second change waits for bob's interval (2 s) in memory: roostd dies first
    assert roost.call("POST", "/notes", {"title": "two", "_acl": {"read": [bob]}}, alice_token).status == 201
    time.sleep(0.3)
    roost.kill9()
    assert len(background(provider, "sync-bob")) == 1
    roost.start()
    assert provider.wait_for(lambda p: len(background(p, "sync-bob")) == 2, timeout=15), roost.log_text()
    assert background(provider, "sync-bob")[1]["payload"]["roost"] == {"sync": ["notes"]}
    assert "resume from the saved feed position" in roost.log_text()


ROLE_COLLECTIONS = """collections:
  notes:
    permission: private
    push_sync: true
"""


def test_sync_push_wakes_acl_readers_by_role_and_follows_role_changes_at_once():
    """`_acl.read` naming a role wakes its members (and a user named there), no one
    else; a membership change holds from the very next change, as it resets a live stream."""
    with push_world(ROLE_COLLECTIONS, sync_interval=1) as (provider, roost):
        ids, tokens = {}, {}
        for name in ("alice", "bob", "carol", "dave", "erin"):
            ids[name], tokens[name] = user(roost, name)
            register(roost, tokens[name], f"sync-{name}", sync=True)
        assert roost.call("POST", "/admin/roles", {"name": "editors"}, ADMIN).status == 201
        member = f"/admin/roles/editors/members/{ids['carol']}"
        assert roost.call("PUT", member, None, ADMIN).status in (200, 201)
        time.sleep(1.2)  # the fan-out reads the devices at most once a second

        def count(name):
            return len(background(provider, f"sync-{name}"))

        note = roost.call("POST", "/notes", {"t": 0, "_acl": {"read": ["role:editors", ids["bob"]]}}, tokens["alice"])
        assert note.status == 201, note.body
        path = f"/notes/{note.body['_id']}"
        assert provider.wait_for(lambda p: count("alice") and count("bob") and count("carol")), roost.log_text()
        time.sleep(1.2)
        assert count("dave") == 0 and count("erin") == 0

        # dave joins the editors; the change right after wakes him (not erin)
        assert roost.call("PUT", f"/admin/roles/editors/members/{ids['dave']}", None, ADMIN).status in (200, 201)
        assert roost.call("PATCH", path, {"t": 1}, tokens["alice"]).status == 200
        assert provider.wait_for(lambda p: count("dave") == 1, timeout=5), roost.log_text()
        time.sleep(1.2)

        # carol leaves; the change right after no longer wakes her, but still dave and bob
        before = {n: count(n) for n in ("bob", "carol", "dave")}
        assert roost.call("DELETE", member, None, ADMIN).status == 200
        assert roost.call("PATCH", path, {"t": 2}, tokens["alice"]).status == 200
        assert provider.wait_for(lambda p: count("dave") > before["dave"] and count("bob") > before["bob"], timeout=5)
        time.sleep(1.5)
        assert count("carol") == before["carol"], "carol was woken for a note she may no longer read"
        assert count("erin") == 0
        assert not provider.errors, provider.errors


@pytest.mark.skipif(engine.name() != "postgresql", reason="two nodes share one database on PostgreSQL only")
def test_two_nodes_on_one_database_coalesce_a_device_s_sync_pushes_together():
    """Both nodes read the same feed and would each wake the device once an interval; the
    per-device claim in the database keeps the device to one push an interval in all."""
    with tempfile.TemporaryDirectory() as tmp:
        provider = Provider(Path(tmp)).start()
        conf = config(provider, extra="collections:\n  tasks:\n    permission: shared\n    push_sync: true\n",
                      push_extra="  sync_interval: 2\n")
        first = Roostd(str(Path(tmp) / "a"), conf, env=env(provider)).start()
        url = engine.database_url(first.data_dir)
        second = Roostd(str(Path(tmp) / "b"), f"database_url: {url}\n" + conf, env=env(provider)).start()
        try:
            _, alice_token = user(first, "alice")
            _, bob_token = user(first, "bob")
            register(first, bob_token, "sync-bob", sync=True)
            time.sleep(1.5)  # both fan-outs read the devices at most once a second
            start = time.time()
            n = 0
            while time.time() - start < 7:
                for node in (first, second):
                    assert node.call("POST", "/tasks", {"n": n}, alice_token).status == 201
                    n += 1
                time.sleep(0.05)
            elapsed = time.time() - start
            time.sleep(3)  # the last interval's push
            pushes = background(provider, "sync-bob")
            # one a node and interval would be about 2 * (7 / 2 + 1) = 9
            assert 3 <= len(pushes) <= int(elapsed / 1.8) + 2, (len(pushes), elapsed)
            gaps = [b["at"] - a["at"] for a, b in zip(pushes, pushes[1:])]
            assert all(g > 1.5 for g in gaps), gaps
            assert not provider.errors, provider.errors
        finally:
            second.stop(strict=False)
            first.stop(strict=False)
            provider.stop()
