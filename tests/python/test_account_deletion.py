"""Account deletion's data policies (issue #38, docs/ACCOUNTS.md): each
collection's `on_user_delete` says what `DELETE /users/:id` does to the
documents the user created (`_acl.creator`): `cascade` deletes them,
`anonymise` keeps them with the creator cleared, `keep` (the default) leaves
them. `collections.files.on_user_delete` does the same for uploads. The
answer comes at once; the documents follow in the background, page by page,
through the write path (change feed, webhooks), durably across a restart.
Documents another user created are never touched. Both engines."""

import tempfile
import threading
import time
import urllib.parse

import pytest

from drills.live_stream import LiveStream
from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, assert_error, png
from webhook_support import Receiver, config as webhook_config

POLICIES = """default_permission: shared
collections:
  gone:
    on_user_delete: cascade
  hidden:
    permission: private
    on_user_delete: cascade
  anon:
    on_user_delete: anonymise
  stays: {{}}
  pinned:
    on_user_delete: cascade
  pins:
    references:
      target: {{collection: pinned, on_delete: restrict}}
  files:
    on_user_delete: {files}
"""

EVENTS = ("gone.deleted", "hidden.deleted", "anon.updated", "stays.deleted", "stays.updated", "rt.updated")


def start(tmp, receiver, files="cascade"):
    return Roostd(tmp, webhook_config(receiver.url, events=EVENTS) + POLICIES.format(files=files)).start()


@pytest.fixture(scope="module")
def world():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        d = start(tmp, receiver)
        d.receiver = receiver
        try:
            yield d
        finally:
            d.stop()
            receiver.stop()


def user(d, name):
    body = d.sign_up(name)
    return body["user"]["_id"], body["token"]


def create(d, collection, body, token):
    r = d.call("POST", f"/{collection}", body, token=token)
    assert r.status == 201, r
    return r.body["_id"]


def upload(d, token, seed):
    r = d.call("POST", "/files", raw_body=png(4, 4, seed), headers={"Content-Type": "image/png", "Authorization": f"Bearer {token}"})
    assert r.status == 201, r
    return r.body["_id"]


def get(d, path):
    return d.call("GET", path, token=ADMIN)


def feed_cursor(d, collection):
    page = get(d, f"/{collection}/_deltaset").body
    while page["more"]:
        page = get(d, f"/{collection}/_deltaset?since={urllib.parse.quote(page['cursor'])}").body
    return page["cursor"]


def feed_since(d, collection, cursor):
    r = get(d, f"/{collection}/_deltaset?since={urllib.parse.quote(cursor)}")
    assert r.status == 200, r
    return r.body


def wait_until(check, d, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, d.log_tail(40)
        time.sleep(0.1)


def test_each_policy_on_documents_and_files(world):
    d = world
    assert d.call("POST", "/admin/collections", {"name": "rt", "on_user_delete": "anonymise"}, token=ADMIN).status == 201
    alice, at = user(d, "alice")
    bob, bt = user(d, "bob")
    mine = {c: [create(d, c, {"i": i}, at) for i in range(3)] for c in ("gone", "hidden", "anon", "stays", "rt")}
    # Bob's documents, one of them writable by Alice: never hers.
    bobs = {c: create(d, c, {"bob": True, "_acl": {"write": [alice], "read": [alice]}}, bt) for c in ("gone", "hidden", "anon", "stays")}
    alice_file, bob_file = upload(d, at, 1), upload(d, bt, 2)
    cursors = {c: feed_cursor(d, c) for c in ("gone", "hidden", "anon", "stays")}

    started = time.monotonic()
    r = d.call("DELETE", f"/users/{alice}", token=at)
    assert r.status == 200 and r.body == {"count": 1}, r
    assert time.monotonic() - started < 2, "the answer waits for no document"

    for c in ("gone", "hidden"):
        wait_until(lambda: all(get(d, f"/{c}/{i}").status == 404 for i in mine[c]), d)
    for c in ("anon", "rt"):
        wait_until(lambda: all(get(d, f"/{c}/{i}").body["_acl"]["creator"] is None for i in mine[c]), d)
    wait_until(lambda: get(d, f"/files/{alice_file}/meta").status == 404, d)
    assert get(d, f"/files/{alice_file}").status == 404

    # Kept and anonymised documents keep their fields; keep leaves the creator.
    for i in mine["anon"]:
        doc = get(d, f"/anon/{i}").body
        assert "i" in doc and doc["_acl"]["creator"] is None, doc
    for i in mine["stays"]:
        assert get(d, f"/stays/{i}").body["_acl"]["creator"] == alice
    # Bob's data is untouched, even where Alice could write.
    for c, i in bobs.items():
        doc = get(d, f"/{c}/{i}").body
        assert doc["_acl"]["creator"] == bob and doc["_acl"]["write"] == [alice], doc
    assert get(d, f"/files/{bob_file}/meta").status == 200
    assert d.call("GET", f"/files/{bob_file}", token=bt).status == 200

    # The change feed has each change (sync and live clients see it) and nothing else.
    for c in ("gone", "hidden"):
        page = feed_since(d, c, cursors[c])
        assert sorted(x["_id"] for x in page["deleted"]) == sorted(mine[c]) and page["changed"] == [], page
    page = feed_since(d, "anon", cursors["anon"])
    assert sorted(x["_id"] for x in page["changed"]) == sorted(mine["anon"]) and page["deleted"] == [], page
    page = feed_since(d, "stays", cursors["stays"])
    assert page["changed"] == [] and page["deleted"] == [], page
    # Webhooks too.
    expected = {("gone.deleted", i) for i in mine["gone"]} | {("hidden.deleted", i) for i in mine["hidden"]}
    expected |= {("anon.updated", i) for i in mine["anon"]} | {("rt.updated", i) for i in mine["rt"]}
    got = lambda: {(p["type"], p["data"].get("_id")) for _, p in d.receiver.accepted()}
    assert d.receiver.wait_for(lambda r: expected <= got()), (expected - got(), d.log_tail(30))
    assert not {e for e in got() if e[1] in bobs.values() or e[0].startswith("stays.")}
    assert "deleted account's data handled" in d.log_text()


def test_live_streams_see_each_change(world):
    d = world
    ivy, it = user(d, "ivy")
    jay, jt = user(d, "jay")
    gone = [create(d, "gone", {"i": i}, it) for i in range(2)]
    anon = [create(d, "anon", {"i": i}, it) for i in range(2)]
    # Jay, a signed-in user, watches both collections (shared: he reads Ivy's documents).
    streams = {c: LiveStream(d.port, f"/{c}/_live", token=jt) for c in ("gone", "anon")}
    for s in streams.values():
        assert s.status == 200 and s.wait_ready(10), s.status
    assert d.call("DELETE", f"/users/{ivy}", token=it).status == 200
    assert streams["gone"].wait_events(2, timeout=30), streams["gone"].snapshot()
    assert streams["anon"].wait_events(2, timeout=30), streams["anon"].snapshot()
    time.sleep(0.3)
    got = {c: sorted((e.kind, e.entity_id) for e in s.snapshot()) for c, s in streams.items()}
    for s in streams.values():
        s.close()
    assert got["gone"] == sorted(("delete", i) for i in gone), got
    assert got["anon"] == sorted(("update", i) for i in anon), got


def test_a_restricting_reference_keeps_a_document_and_the_log_says_why(world):
    d = world
    kim, kt = user(d, "kim")
    lee, lt = user(d, "lee")
    pinned = [create(d, "pinned", {"i": i}, kt) for i in range(3)]
    create(d, "pins", {"target": {"_type": "ref", "_collection": "pinned", "_id": pinned[1]}}, lt)
    assert d.call("DELETE", f"/users/{kim}", token=kt).status == 200
    wait_until(lambda: get(d, f"/pinned/{pinned[0]}").status == 404 and get(d, f"/pinned/{pinned[2]}").status == 404, d)
    wait_until(lambda: any(kim in line and "kept" in line for line in d.log_text().splitlines()
                           if "deleted account's data handled" in line), d)
    assert get(d, f"/pinned/{pinned[1]}").body["_acl"]["creator"] == kim  # Lee's reference restricts: kept as it was


def test_others_cannot_delete_an_account_or_clear_a_creator(world):
    d = world
    carol, ct = user(d, "carol")
    dave, dt = user(d, "dave")
    doc = create(d, "gone", {"x": 1}, ct)
    assert_error(d.call("DELETE", f"/users/{carol}", token=dt), 403)
    assert_error(d.call("DELETE", f"/users/{carol}"), 401)
    # Nobody clears a creator through the API, the owner included.
    assert_error(d.call("PUT", f"/gone/{doc}", {"x": 2, "_acl": {"creator": None}}, token=ct), 400)
    assert_error(d.call("PATCH", f"/gone/{doc}", {"_acl": {"creator": None}}, token=ct,
                        headers={"Content-Type": "application/merge-patch+json"}), 400)
    time.sleep(1.5)
    assert get(d, f"/gone/{doc}").body["_acl"]["creator"] == carol
    assert d.call("GET", "/users/me", token=ct).status == 200
    # Deleting Dave leaves Carol's document alone.
    assert d.call("DELETE", f"/users/{dave}", token=dt).status == 200
    time.sleep(1.5)
    assert get(d, f"/gone/{doc}").status == 200


@pytest.mark.parametrize("body", [{"name": "bad1", "on_user_delete": "shred"}, {"name": "bad2", "on_user_delete": 3}])
def test_a_bad_policy_is_refused(world, body):
    r = world.call("POST", "/admin/collections", body, token=ADMIN)
    assert (r.status, r.body["error"]) == (400, "InvalidSettings"), r
    assert "on_user_delete" in r.body["description"]


def test_the_policy_shows_in_the_collection_settings(world):
    r = world.call("GET", "/admin/collections/rt", token=ADMIN)
    assert r.status == 200 and r.body["settings"]["on_user_delete"] == "anonymise", r


def test_files_anonymise_keeps_the_upload_without_its_creator():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        d = start(tmp, receiver, files="anonymise")
        try:
            erin, et = user(d, "erin")
            f = upload(d, et, 3)
            assert d.call("DELETE", f"/users/{erin}", token=ADMIN).status == 200
            wait_until(lambda: get(d, f"/files/{f}/meta").body["_acl"]["creator"] is None, d)
            assert get(d, f"/files/{f}").status == 200
        finally:
            d.stop()
            receiver.stop()


def bulk(d, collection, token, n, who):
    for start_at in range(0, n, 100):
        ops = [{"method": "POST", "path": f"/{collection}", "body": {"i": i, "who": who}} for i in range(start_at, min(n, start_at + 100))]
        r = d.call("POST", "/_batch", {"operations": ops}, token=token)
        assert r.status == 200, r


def count_of(d, collection, who):
    q = urllib.parse.quote('{"who": "%s"}' % who)
    r = get(d, f"/{collection}/_count?query={q}")
    assert r.status == 200, r
    return r.body["count"]


def test_a_large_account_is_removed_in_steps_while_others_are_served(world):
    d = world
    frank, ft = user(d, "frank")
    grace, gt = user(d, "grace")
    bulk(d, "gone", ft, 5000, "frank")
    theirs = create(d, "gone", {"grace": 1, "who": "grace"}, gt)
    assert count_of(d, "gone", "frank") == 5000
    started = time.monotonic()
    assert d.call("DELETE", f"/users/{frank}", token=ft).status == 200
    assert time.monotonic() - started < 2
    # While the purge runs, other requests are answered promptly, and it goes in steps.
    seen, slowest = set(), 0.0
    while True:
        t0 = time.monotonic()
        r = d.call("GET", f"/gone/{theirs}", token=gt)
        slowest = max(slowest, time.monotonic() - t0)
        assert r.status == 200, r
        w = d.call("POST", "/stays", {"during": True}, token=gt)
        assert w.status == 201, w
        left = count_of(d, "gone", "frank")
        seen.add(left)
        if left == 0:
            break
        assert time.monotonic() - started < 180, d.log_tail(30)
        time.sleep(0.05)
    assert any(0 < n < 5000 for n in seen), seen
    assert slowest < 1.5, slowest
    assert get(d, f"/gone/{theirs}").status == 200 and count_of(d, "gone", "grace") == 1


def test_a_purge_cut_by_a_restart_finishes_after_it():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        d = start(tmp, receiver)
        try:
            henry, ht = user(d, "henry")
            bulk(d, "gone", ht, 3000, "henry")
            assert d.call("DELETE", f"/users/{henry}", token=ht).status == 200
            wait_until(lambda: count_of(d, "gone", "henry") < 3000, d)
            assert count_of(d, "gone", "henry") > 0
            d.restart()
            # Cut short by the stop (not counted as a failed attempt), it goes on after the start.
            assert "interrupted by the shutdown" in d.log_text(), d.log_tail(30)
            wait_until(lambda: count_of(d, "gone", "henry") == 0, d, timeout=120)
        finally:
            d.stop()
            receiver.stop()
