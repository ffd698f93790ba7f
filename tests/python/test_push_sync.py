"""Silent sync pushes: a change in a `push_sync: true` collection wakes
the sync devices of exactly the users who may read it (the live streams'
rule: ACLs and the collection's level), as an APNs background push
(content-available, priority 5, collapse id) or an FCM data message,
coalesced per device to `push.sync_interval`."""

import json
import time

import pytest

from push_support import push_world, register, user

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
