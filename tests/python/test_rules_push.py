"""Issue #35, access rules and silent sync pushes (docs/RULES.md: the read rule holds
for "silent sync pushes"): a change wakes the sync devices of exactly the users whose
read rule shows the row, before or after the change."""

import time

import pytest

from push_support import push_world, register, user

COLLECTIONS = """collections:
  posts:
    permission: shared
    push_sync: true
    rules:
      read: '{"$or": [{"published": true}, {"owner": "@caller.id"}]}'
"""


@pytest.fixture
def world():
    with push_world(COLLECTIONS, sync_interval=1) as w:
        yield w


def woken(provider, device):
    with provider.lock:
        return len([r for r in provider.requests if r["token"] == device and r["status"] == 200])


def test_sync_pushes_follow_the_read_rule(world):
    provider, roost = world
    alice, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, alice_token, "sync-alice", sync=True)
    register(roost, bob_token, "sync-bob", sync=True)
    time.sleep(1.2)  # the fan-out reads the devices at most once a second

    # alice's draft: only alice may read it.
    draft = roost.call("POST", "/posts", {"owner": alice, "published": False}, alice_token)
    assert draft.status == 201, draft
    assert provider.wait_for(lambda p: woken(p, "sync-alice") >= 1), roost.log_text()
    time.sleep(1.5)
    assert woken(provider, "sync-bob") == 0, "bob was woken for a row his read rule hides"

    # Published: bob may read it now (a change for him).
    seen = woken(provider, "sync-alice")
    assert roost.call("PATCH", f"/posts/{draft.body['_id']}", {"published": True}, alice_token).status == 200
    assert provider.wait_for(lambda p: woken(p, "sync-bob") >= 1), roost.log_text()
    assert provider.wait_for(lambda p: woken(p, "sync-alice") > seen)
    time.sleep(1.5)

    # Unpublished: bob could read it before the change (a delete for him): woken again.
    bob_before = woken(provider, "sync-bob")
    assert roost.call("PATCH", f"/posts/{draft.body['_id']}", {"published": False}, alice_token).status == 200
    assert provider.wait_for(lambda p: woken(p, "sync-bob") > bob_before), roost.log_text()
    time.sleep(1.5)

    # Changes of the hidden draft again wake only alice.
    bob_before, alice_before = woken(provider, "sync-bob"), woken(provider, "sync-alice")
    assert roost.call("PATCH", f"/posts/{draft.body['_id']}", {"v": 1}, alice_token).status == 200
    assert provider.wait_for(lambda p: woken(p, "sync-alice") > alice_before)
    time.sleep(1.5)
    assert woken(provider, "sync-bob") == bob_before, "bob was woken for a change of a row hidden before and after"
    assert not provider.errors, provider.errors
