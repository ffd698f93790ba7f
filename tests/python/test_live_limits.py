"""Issue #16, live updates: sessions ending streams, heartbeats, `reset` for another
database's cursor, live_max_connections, live_max_per_address, slow and fast clients
and backlogs larger than the buffer. The basics are in test_live.py."""

import time

import pytest

from drills.common import ADMIN_TOKEN
from drills.live import LiveStream, cursor_seq, live_path, metric

from live_support import PASSWORD, PER_ADDRESS_CONFIG, assert_error, kinds, limits, module_node, roost


# ---------------------------------------------------------------------------------------------
# 5. Sessions, heartbeats, resets, limits

@pytest.mark.parametrize("how", ["logout", "admin-revoke", "password-change"])
def test_revoked_session_ends_the_stream(roost, how):
    uid, token = roost.new_user("leaver")
    _, other = roost.new_user("stayer")
    s = roost.stream(live_path("liveShared"), token=token)
    keep = roost.stream(live_path("liveShared"), token=other)
    if how == "logout":
        r = roost.api(token).request("POST", "/logout")
    elif how == "admin-revoke":
        r = roost.api(ADMIN_TOKEN).request("DELETE", f"/admin/users/{uid}/sessions")
    else:  # a new password signs out the user's other sessions
        login = roost.api().request("POST", "/login", {"username": roost.usernames[uid], "password": PASSWORD})
        r = roost.api(login.json()["token"]).request("PATCH", f"/users/{uid}",
                                                      {"password": "another horse battery", "oldPassword": PASSWORD})
    assert r.status in (200, 204), r
    t0 = time.monotonic()
    assert s.wait_end(3), f"the stream of a revoked session ({how}) is still open after 3 s"
    assert time.monotonic() - t0 < 2.5, time.monotonic() - t0   # live_heartbeat is 1 s
    assert roost.api(other).request("POST", "/liveShared", {"after": how}).status == 201
    assert keep.wait_events(1) and keep.end is None, "another user's stream ended with the revocation"
    keep.close()
    assert roost.stream(live_path("liveShared"), token=token).status == 401


def test_expired_session_ends_the_stream(limits):
    _, token = limits.new_user("brief")          # session_lifetime: 3
    s = limits.stream(live_path("liveShared"), token=token)
    t0 = time.monotonic()
    assert s.wait_end(7), "the stream outlived its session (3 s) by more than 4 s"
    assert 1.5 < time.monotonic() - t0, "the stream ended before its session expired"
    assert limits.stream(live_path("liveShared"), token=token).status == 401


def test_heartbeats_arrive(roost):
    s = roost.stream(live_path("livePub"))
    assert s.wait(lambda st: len(st.comments) >= 3, 6), s.comments
    s.close()
    assert all(text == "heartbeat" for text, _ in s.comments)
    gaps = [b[1] - a[1] for a, b in zip(s.comments, s.comments[1:])]
    assert all(0.5 < g < 2.5 for g in gaps), gaps


def test_cursor_from_another_database_gets_reset_then_live(roost, limits):
    other = limits.stream(live_path("livePub"))
    assert limits.api().request("POST", "/livePub", {"x": 1}).status == 201
    assert other.wait_events(1)
    other.close()
    foreign = other.events[0].id
    s = roost.stream(live_path("livePub"), last_event_id=foreign)
    assert s.wait_events(1), s.snapshot()
    r = roost.api().request("POST", "/livePub", {"after": "reset"})
    assert s.wait_events(2), s.snapshot()
    s.close()
    assert [e.kind for e in s.events] == ["reset", "create"], kinds(s.events)
    assert s.events[1].entity_id == r.json()["_id"]
    assert cursor_seq(s.events[0].id) < cursor_seq(s.events[1].id)
    # The reset's id is a good cursor: resuming from it replays the create.
    again = roost.stream(live_path("livePub"), last_event_id=s.events[0].id)
    assert again.wait_events(1)
    again.close()
    assert cursor_seq(again.events[0].id) == cursor_seq(s.events[1].id)
    assert (again.events[0].kind, again.events[0].entity_id) == ("create", s.events[1].entity_id)


def _wait_streams(node, n, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if metric(node.port, "roost_live_streams") == n:
            return True
        time.sleep(0.1)
    return False


def test_live_max_connections(limits):
    assert _wait_streams(limits, 0)
    streams = [limits.stream(live_path("livePub")) for _ in range(3)]
    try:
        assert [s.status for s in streams] == [200, 200, 200]
        fourth = limits.stream(live_path("livePub"))
        assert fourth.status == 503, fourth.body
        assert fourth.headers.get("retry-after"), fourth.headers
        assert_error(fourth, 503)
        assert limits.api().request("GET", "/healthz").status == 200
        assert _wait_streams(limits, 3)
        streams.pop().close()
        assert _wait_streams(limits, 2)
        streams.append(limits.stream(live_path("livePub")))
        assert streams[-1].status == 200, "a freed slot was not given back"
    finally:
        for s in streams:
            s.close()
    assert _wait_streams(limits, 0)


per_address = module_node("per_address", PER_ADDRESS_CONFIG)


def test_live_max_per_address(per_address):
    """One client address cannot take every stream: past live_max_per_address
    it gets 429 (JSON, Retry-After), while other addresses (named by a trusted
    proxy, as the throttles see them) still get streams, and a closed stream
    gives its address's slot back."""
    node = per_address
    proxied = {"X-Forwarded-For": "203.0.113.7"}
    direct = [node.stream(live_path("livePub")) for _ in range(2)]
    via = []
    try:
        assert [s.status for s in direct] == [200, 200]
        third = node.stream(live_path("livePub"))
        assert_error(third, 429, "TooManyStreams")
        assert int(third.headers.get("retry-after", "0")) > 0, third.headers
        via = [node.stream(live_path("livePub"), headers=proxied) for _ in range(2)]
        assert [s.status for s in via] == [200, 200], [s.body for s in via]
        assert_error(node.stream(live_path("livePub"), headers=proxied), 429, "TooManyStreams")
        # A third address is unaffected; refused streams took no slot.
        other = node.stream(live_path("livePub"), headers={"X-Forwarded-For": "198.51.100.1"})
        assert other.status == 200
        other.close()
        assert _wait_streams(node, 4)
        # The streams still work, and a freed slot returns to its address.
        r = node.api().request("POST", "/livePub", {"n": 1})
        assert r.status == 201
        assert all(s.wait_events(1) for s in direct + via)
        direct.pop().close()
        assert _wait_streams(node, 3)
        direct.append(node.stream(live_path("livePub")))
        assert direct[-1].status == 200, "a freed per-address slot was not given back"
    finally:
        for s in direct + via:
            s.close()
    assert _wait_streams(node, 0)


def test_slow_client_is_dropped_while_others_keep_up(limits):
    assert _wait_streams(limits, 0)
    slow = LiveStream(limits.port, live_path("livePub"), read=False, rcvbuf=4096)
    fast = limits.stream(live_path("livePub"))
    try:
        assert slow.status == 200
        before = metric(limits.port, "roost_live_slow_disconnects_total")
        api, pad, n = limits.api(), "y" * 8000, 600   # ~5 MB: more than the kernel's buffers hold
        ids = []
        for k in range(n):
            r = api.request("POST", "/livePub", {"k": k, "pad": pad})
            assert r.status == 201
            ids.append(r.json()["_id"])
            if k % 100 == 99 and metric(limits.port, "roost_live_slow_disconnects_total") > before:
                break
        assert fast.wait_events(len(ids), 20), (len(fast.events), len(ids), fast.end)
        assert [e.entity_id for e in fast.events] == ids and fast.end is None
        deadline = time.monotonic() + 5
        while metric(limits.port, "roost_live_slow_disconnects_total") <= before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert metric(limits.port, "roost_live_slow_disconnects_total") == before + 1
        assert _wait_streams(limits, 1)
        # The slow client's connection is gone: reading drains what was buffered, then EOF/reset.
        slow.sock.settimeout(5)
        total = 0
        try:
            while True:
                data = slow.sock.recv(1 << 20)
                if not data:
                    break
                total += len(data)
        except ConnectionResetError:
            pass
        assert total < len(ids) * len(pad), "the slow client was sent everything"
    finally:
        slow.close(), fast.close()


def test_fast_client_gets_a_burst_larger_than_the_buffer(limits):
    """A client that reads promptly is not 'slow' because one group commit (a
    /_batch of 10 writes, ~160 KB of events) is larger than live_buffer_bytes
    (64 KiB here): it gets every event and stays connected."""
    assert _wait_streams(limits, 0)
    fast = limits.stream(live_path("livePub"))
    ops = [{"method": "POST", "path": "/livePub", "body": {"k": k, "pad": "z" * 16000}} for k in range(10)]
    r = limits.api().request("POST", "/_batch", {"operations": ops})
    assert r.status == 200, r
    ok = fast.wait_events(10, 5)
    fast.close()
    assert ok and fast.end == "closed", f"the reading client was dropped ({fast.end}) after {len(fast.events)} events"
    assert [e.entity_id for e in fast.events] == [x["body"]["_id"] for x in r.json()["results"]]


def test_resume_with_a_backlog_larger_than_the_buffer_catches_up(limits):
    """A client that comes back after more than live_buffer_bytes of changes
    (here 20 writes of 8 KB, each its own commit, against 64 KiB) must get
    past them on resume: "it resumes with Last-Event-ID and loses nothing"."""
    assert _wait_streams(limits, 0)
    s = limits.stream(live_path("livePub"))
    api = limits.api()
    assert api.request("POST", "/livePub", {"mark": 1}).status == 201
    assert s.wait_events(1)
    s.close()
    ids = [api.request("POST", "/livePub", {"k": k, "pad": "z" * 8000}).json()["_id"] for k in range(20)]
    progress = []
    for attempt in range(3):   # an EventSource would retry forever
        resumed = limits.stream(live_path("livePub"), last_event_id=s.events[0].id)
        ok = resumed.wait_events(20, 3)
        resumed.close()
        progress.append((len(resumed.events), resumed.end))
        if ok:
            break
    assert ok, f"resuming before a 160 KB backlog never catches up: (events, end) per attempt {progress}"
    assert [e.entity_id for e in resumed.events] == ids
