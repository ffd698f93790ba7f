"""Issue #33, live updates: what one stream, one filter or one caller may cost.

- Memory: a stream holds at most `live_buffer_bytes` (counted as bytes are
  queued, whatever one round of the fan-out holds), an event is made once and
  shared by every stream that gets it; idle streams on big documents leave the
  daemon's RSS within a stated bound, and a dropped client that resumes with
  `Last-Event-ID` gets every change it missed.
- Matching: a costly filter (huge `$in` on a huge array, `$elemMatch` over
  50,000 elements, hundreds of distinct costly filters) does not delay another
  user's event past 1 s; one that runs past its budget gets `reset` and is closed.
- Slots: a stream is reserved only once its caller is known (a bad token never
  holds one), and `live_max_per_account` limits one user's streams (429 with
  Retry-After) whatever addresses they come from.
"""

import pathlib
import threading
import time
import urllib.parse

import pytest

from drills.live import LiveStream, cursor_seq, events_path, live_path, metric

from live_support import CONFIG, Client, assert_error, module_node


BUFFER = 256 * 1024
BOUNDS_CONFIG = CONFIG + f"live_buffer_bytes: {BUFFER}\nmax_body_bytes: 2097152\n"
# Stream opens are not rate limited here: the floods below test slots, not rate_limits.live_streams.
SLOTS_CONFIG = CONFIG + ('live_max_per_account: 3\nlive_max_per_address: 4\ntrusted_proxies: ["127.0.0.1"]\n'
                         'rate_limits:\n  live_streams: {per_second: 0}\n')
MiB = 1024 * 1024

bounds = module_node("bounds", BOUNDS_CONFIG)
slots = module_node("slots", SLOTS_CONFIG)


# ---------------------------------------------------------------------------------------------
# Helpers

def vm_rss(node):
    for line in pathlib.Path(f"/proc/{node.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class PeakRSS:
    """Samples the daemon's VmRSS every 10 ms while the `with` body runs: `.growth` over the start."""

    def __init__(self, node):
        self.node, self.base = node, vm_rss(node)
        self.peak, self._stop = self.base, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, vm_rss(self.node))
            time.sleep(0.01)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)
        self.peak = max(self.peak, vm_rss(self.node))

    @property
    def growth(self):
        return self.peak - self.base


def settle(node, seconds=2.5):
    """Freed memory goes back to the kernel within about a second (jemalloc's background thread)."""
    time.sleep(seconds)
    return vm_rss(node)


def rss_back(node, base, margin, timeout=10):
    """Polls until the daemon's VmRSS is below base + margin (freed memory goes back within about
    a second); returns the last reading, below or not, once it is or `timeout` has passed."""
    deadline = time.monotonic() + timeout
    rss = vm_rss(node)
    while rss - base >= margin and time.monotonic() < deadline:
        time.sleep(0.2)
        rss = vm_rss(node)
    return rss


def wait_metric(node, name, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = metric(node.port, name)
        if predicate(value):
            return value
        time.sleep(0.2)
    return metric(node.port, name)


def idle_stream(node, path, token=None, last_event_id=None):
    """A client that never reads (a tiny receive buffer, no reader thread)."""
    s = LiveStream(node.port, path, token=token, last_event_id=last_event_id, read=False, rcvbuf=4096)
    assert s.status == 200, (s.status, s.body)
    return s


def drain(stream, timeout=10):
    """Reads what a dropped idle stream's connection still delivers, to its end; returns its complete events.
    A connection that was not dropped (heartbeats keep it busy) fails after 3 × timeout instead of hanging."""
    stream.sock.settimeout(timeout)
    # parses until EOF or reset; a cut-off event is not counted
    reader = threading.Thread(target=stream._run, daemon=True)
    reader.start()
    reader.join(3 * timeout)
    assert not reader.is_alive(), "the idle stream's connection was never ended"
    return stream.snapshot()


def batch_patches(node, token, collection, doc_id, n):
    ops = [{"method": "PATCH", "path": f"/{collection}/{doc_id}", "body": {"n": k}} for k in range(n)]
    r = Client(node.port, timeout=120, token=token).request("POST", "/_batch", {"operations": ops})
    assert r.status == 200, r
    assert all(x["status"] == 200 for x in r.json()["results"]), r.json()["results"][:3]


# ---------------------------------------------------------------------------------------------
# 1. Memory: the per-stream bound and shared events

# (name, idle streams, writer, path builder, collection, document bytes, PATCHes in one /_batch).
# The case was 10 streams, 500 KB and 100 PATCHes; a debug build takes
# about 0.25 s per PATCH of 500 KB, so these are smaller, and still hold
# 60 to 120 MB for the idle streams without the bound.
BUFFER_CASES = [
    ("issue-anonymous-public", 10, "anonymous", lambda c: live_path(c), "livePub", 400_000, 15),
    ("users-events-shared", 6, "user", lambda c: events_path([{"collection": c}]), "liveShared", 1_000_000, 8),
    ("filtered-stream", 8, "user", lambda c: live_path(c, {"n": {"$gte": 0}}), "liveShared", 200_000, 20),
]


@pytest.mark.parametrize("name,streams,writer,path_of,collection,size,changes", BUFFER_CASES,
                         ids=[c[0] for c in BUFFER_CASES])
def test_idle_streams_on_big_documents_stay_within_the_buffer_bound(bounds, name, streams, writer, path_of,
                                                                    collection, size, changes):
    """The issue's case and variants: idle streams and one /_batch of PATCHes to
    a big document. Each stream may hold live_buffer_bytes (events are shared,
    so together they hold far less); the daemon's RSS, measured against the same
    batch with no idle stream, may grow by at most streams × live_buffer_bytes
    + 32 MiB (before the fix: changes × size per stream, 600 MB in the issue).
    The idle clients are dropped, and the reading one gets every change."""
    token = bounds.new_user(f"buf-{name}")[1] if writer == "user" else None
    api = bounds.api(token)
    r = api.request("POST", f"/{collection}", {"pad": "x" * size, "n": -1})
    assert r.status == 201, r
    doc_id, path = r.json()["_id"], path_of(collection)
    watcher = bounds.stream(path, token=token)

    def one_batch(expected_events):
        batch_patches(bounds, token, collection, doc_id, changes)
        assert watcher.wait_events(expected_events, 60), (len(watcher.events), watcher.end)

    settle(bounds)
    with PeakRSS(bounds) as control:
        one_batch(changes)
    idle = [idle_stream(bounds, path, token) for _ in range(streams)]
    try:
        assert wait_metric(bounds, "roost_live_streams", lambda v: v >= streams + 1, 5) >= streams + 1
        slow_before = metric(bounds.port, "roost_live_slow_disconnects_total")
        before = settle(bounds)
        with PeakRSS(bounds) as loaded:
            one_batch(2 * changes)
        extra = loaded.growth - control.growth
        bound = streams * BUFFER + 32 * MiB
        assert extra < bound, (f"{streams} idle streams cost {extra / MiB:.0f} MiB more than none "
                               f"(control {control.growth / MiB:.0f} MiB); bound {bound / MiB:.0f} MiB")
        # The reader got every change, in order, each with the whole entity.
        got = watcher.snapshot()[changes:]
        assert [e.entity["n"] for e in got] == list(range(changes))
        assert all(len(e.entity["pad"]) == size for e in got)
        # Idle clients are dropped once they take nothing for a while (2 s), and their memory goes back.
        assert wait_metric(bounds, "roost_live_slow_disconnects_total",
                           lambda v: v >= slow_before + streams, 10) == slow_before + streams
        after = rss_back(bounds, before, 32 * MiB)
        assert after - before < 32 * MiB, f"RSS {before / MiB:.0f} → {after / MiB:.0f} MiB after the idle streams went"
        assert watcher.end is None, "the reading client was dropped"
    finally:
        watcher.close()
        for s in idle:
            s.close()


# (name, writer, path builder, collection, how the changes are made)
RESUME_CASES = [
    ("anonymous-creates", "anonymous", lambda c: live_path(c), "livePub", "creates"),
    ("user-events-patches", "user", lambda c: events_path([{"collection": c, "query": {"n": {"$gte": 0}}}]), "liveShared", "patches"),
    ("user-private-own", "user", lambda c: live_path(c), "livePriv", "creates"),
]


@pytest.mark.parametrize("name,writer,path_of,collection,how", RESUME_CASES, ids=[c[0] for c in RESUME_CASES])
def test_a_dropped_client_resumes_and_loses_nothing(bounds, name, writer, path_of, collection, how):
    """A client that stops reading is dropped (it would pass live_buffer_bytes);
    reconnecting with the Last-Event-ID of the last whole event it got, it
    receives every change after it: no gap, no duplicate, in order."""
    token = bounds.new_user(f"resume-{name}")[1] if writer == "user" else None
    api, path = bounds.api(token), path_of(collection)
    # A starting cursor, in case the dropped connection delivers no whole event.
    marker = bounds.stream(path, token=token)
    r = api.request("POST", f"/{collection}", {"n": 0, "marker": True})
    assert r.status == 201 and marker.wait_events(1), r
    marker.close()
    start = marker.events[0].id
    slow_before = metric(bounds.port, "roost_live_slow_disconnects_total")
    s = idle_stream(bounds, path, token, last_event_id=start)
    pad = "p" * 100_000
    expected = []   # (entity id, n) of every change after the marker, in commit order
    if how == "creates":
        for k in range(1, 41):
            r = api.request("POST", f"/{collection}", {"n": k, "pad": pad})
            assert r.status == 201, r
            expected.append((r.json()["_id"], k))
    else:
        r = api.request("POST", f"/{collection}", {"n": 1, "pad": pad * 3})
        assert r.status == 201
        doc_id = r.json()["_id"]
        expected.append((doc_id, 1))
        batch_patches(bounds, token, collection, doc_id, 40)
        expected += [(doc_id, k) for k in range(40)]
    assert wait_metric(bounds, "roost_live_slow_disconnects_total", lambda v: v > slow_before, 10) > slow_before, \
        "the idle client was not dropped"
    first = drain(s)
    assert s.end in ("eof", "reset"), s.end
    assert len(first) < len(expected), "the idle client got everything: nothing was tested"
    resumed = bounds.stream(path, token=token, last_event_id=first[-1].id if first else start)
    sentinel = api.request("POST", f"/{collection}", {"n": 1000, "sentinel": True}).json()["_id"]
    assert resumed.wait(lambda st: any(e.entity_id == sentinel for e in st.events), 30), \
        (len(resumed.events), resumed.end)
    resumed.close()
    events = first + [e for e in resumed.snapshot() if e.entity_id != sentinel]
    assert [(e.entity_id, e.entity["n"]) for e in events] == expected
    seqs = [cursor_seq(e.id) for e in events]
    assert seqs == sorted(set(seqs)), "duplicated or out of order"


# ---------------------------------------------------------------------------------------------
# 2. Matching: one user's filter does not stall another's events

BIG_ARRAY = list(range(100_000, 150_000)) + [7]     # 50,001 numbers; 7 is in the $in below


def in_filter():
    return {"arr": {"$in": list(range(1000))}}


def or_scans_filter():
    """400 conditions, each a scan of the whole array: 20 million comparisons on the big document."""
    return {"$or": [{"arr": {"$lt": -k}} for k in range(400)]}


def distinct_filters(stream, topics=32):
    """32 filters no other stream shares, none matching the big document (each scans all of it)."""
    return [{"collection": "livePub", "query": {"arr": {"$in": [-(stream * 10_000 + t * 100 + k) for k in range(40)]}}}
            for t in range(topics)]


# (name, attacker streams' paths, whether their filters match the big document, whether they run past the budget)
HOSTILE_CASES = [
    ("in-1000-values", [live_path("livePub", in_filter())], True, False),
    ("or-400-scans", [live_path("livePub", or_scans_filter())], False, True),
    ("320-distinct-filters", [events_path(distinct_filters(s)) for s in range(10)], False, True),
]


@pytest.mark.parametrize("name,paths,matches,over_budget", HOSTILE_CASES, ids=[c[0] for c in HOSTILE_CASES])
@pytest.mark.parametrize("victim_follows", ["liveShared", "livePub"])
def test_a_costly_filter_does_not_delay_another_users_event(bounds, name, paths, matches, over_budget, victim_follows):
    """Before the fix a {"arr": {"$in": [1,000 numbers]}} stream and one anonymous
    POST of a 50,000-element array delayed another user's event from 4 ms to
    5.5 s. Now `$in` is a hash lookup, each filter has a budget per change and
    all filters together one per change, cheap ones first: the other user's
    event arrives within 1 s, and a stream whose filter ran past its budget gets
    `reset` (with the costly change's id, so resuming skips it) and is closed."""
    _, victim_token = bounds.new_user(f"victim-{name}")
    attackers = [bounds.stream(p) for p in paths]
    assert all(a.status == 200 for a in attackers), [a.body for a in attackers]
    victim = bounds.stream(live_path(victim_follows, {"room": "a"}), token=victim_token)
    observer = bounds.stream(live_path("livePub"))      # {}: sees the costly change, at no cost
    over_before = metric(bounds.port, "roost_live_over_budget_total")
    try:
        big = bounds.api().request("POST", "/livePub", {"arr": BIG_ARRAY, "room": "b"})
        assert big.status == 201, big
        big_id = big.json()["_id"]
        t0 = time.monotonic()
        mine = bounds.api(victim_token).request("POST", f"/{victim_follows}", {"room": "a"})
        assert mine.status == 201
        mine_id = mine.json()["_id"]
        assert victim.wait(lambda st: any(e.entity_id == mine_id for e in st.events), 10), victim.snapshot()
        arrived = next(e.t for e in victim.snapshot() if e.entity_id == mine_id)
        assert arrived - t0 < 1.0, f"the other user's event took {arrived - t0:.2f} s"
        assert [e.kind for e in victim.snapshot()] == ["create"] and victim.end is None, victim.snapshot()
        assert observer.wait(lambda st: any(e.entity_id == big_id for e in st.events), 10)
        big_seq = next(cursor_seq(e.id) for e in observer.snapshot() if e.entity_id == big_id)
        for a in attackers:
            assert a.wait(lambda st: st.events or st.end, 10), "the costly stream got nothing"
        kinds = [[(e.kind, e.entity_id) for e in a.snapshot()] for a in attackers]
        if over_budget:
            for a in attackers:
                assert a.events[0].kind == "reset", kinds
                assert a.wait_end(5) and a.end == "clean", a.end
                assert cursor_seq(a.events[0].id) == big_seq
                assert "budget" in a.events[0].data["reason"]
            assert metric(bounds.port, "roost_live_over_budget_total") >= over_before + len(attackers)
            # Resuming from the reset skips the costly change: the stream goes on.
            again = bounds.stream(paths[0], last_event_id=attackers[0].events[0].id)
            later = bounds.api().request("POST", "/livePub", {"arr": [], "room": "c"}).json()["_id"]
            assert observer.wait(lambda st: any(e.entity_id == later for e in st.events), 10)
            time.sleep(0.3)
            again.close()
            assert again.end == "closed" and all(e.entity_id != big_id for e in again.events), again.events
        elif matches:
            assert all(k[:1] == [("create", big_id)] for k in kinds), kinds
            assert all(a.end is None for a in attackers)
    finally:
        victim.close()
        observer.close()
        for a in attackers:
            a.close()


def test_a_streams_queries_have_a_bound_on_conditions_together(bounds):
    """32 topics of 40 conditions each pass one by one (1,000 per query), but
    not together: a stream's queries may have 1,000 conditions in all."""
    topics = [{"collection": "livePub", "query": {"$and": [{f"f{k}": k} for k in range(40)]}} for _ in range(32)]
    s = bounds.stream(events_path(topics))
    assert_error(s, 400, "InvalidQuery")
    assert "1000 conditions" in s.json()["description"], s.json()
    ok = bounds.stream(events_path(topics[:20]))
    assert ok.status == 200
    ok.close()


# ---------------------------------------------------------------------------------------------
# 3. Slots: authentication first, and a limit per account

def _streams(node):
    return metric(node.port, "roost_live_streams")


def _wait_streams(node, n, timeout=5):
    return wait_metric(node, "roost_live_streams", lambda v: v == n, timeout) == n


@pytest.mark.parametrize("route", ["collection", "events"])
def test_live_max_per_account(slots, route):
    """One user may hold live_max_per_account (3 here) streams, from any
    address (a trusted proxy names four): the fourth gets 429 TooManyStreams
    with Retry-After; another user and anonymous callers are unaffected; a
    closed stream gives its slot back."""
    path = live_path("liveShared") if route == "collection" else events_path([{"collection": "liveShared"}])
    _, token = slots.new_user(f"acct-{route}")
    _, other = slots.new_user(f"other-{route}")
    assert _wait_streams(slots, 0)
    mine = [slots.stream(path, token=token, headers={"X-Forwarded-For": f"198.51.100.{k}"}) for k in range(3)]
    rest = []
    try:
        assert [s.status for s in mine] == [200] * 3
        for address in ("198.51.100.9", "203.0.113.50"):
            fourth = slots.stream(path, token=token, headers={"X-Forwarded-For": address})
            assert_error(fourth, 429, "TooManyStreams")
            assert int(fourth.headers.get("retry-after", "0")) > 0, fourth.headers
            assert "live_max_per_account" in fourth.json()["description"]
        rest = [slots.stream(path, token=other), slots.stream(live_path("livePub"))]
        assert [s.status for s in rest] == [200, 200]
        assert _wait_streams(slots, 5)
        r = slots.api(token).request("POST", "/liveShared", {"n": 1})
        assert r.status == 201 and all(s.wait_events(1) for s in mine + rest[:1])
        mine.pop().close()
        assert _wait_streams(slots, 4)
        mine.append(slots.stream(path, token=token))
        assert mine[-1].status == 200, "a freed per-account slot was not given back"
    finally:
        for s in mine + rest:
            s.close()
    assert _wait_streams(slots, 0)


# (name, what the refused request sends)
REFUSED_FIRST = [
    ("bad-token", {"token": "not-a-token"}, 401, "InvalidToken"),
    ("bad-query", {"query": "{nope"}, 400, "InvalidQuery"),
    ("private-anonymous", {"collection": "livePriv"}, 401, None),
]


@pytest.mark.parametrize("name,bad,status,code", REFUSED_FIRST, ids=[c[0] for c in REFUSED_FIRST])
def test_refused_callers_take_no_slot(slots, name, bad, status, code):
    """Slots are reserved after the caller is found and the query checked: while
    requests that will be refused pour in from one address (in parallel, as
    fast as they are answered), that address still opens its
    live_max_per_address (4) streams every time, and a user still opens its 3."""
    collection = bad.get("collection", "liveShared")
    if "query" in bad:
        bad_path = f"/{collection}/_live?query=" + urllib.parse.quote(bad["query"], safe="")
    else:
        bad_path = live_path(collection)
    probe = slots.stream(bad_path, token=bad.get("token"))
    assert_error(probe, status, code)
    _, token = slots.new_user(f"slot-{name}")
    assert _wait_streams(slots, 0)
    stop, refused, errors = threading.Event(), [0], []

    def flood():
        while not stop.is_set():
            try:
                s = LiveStream(slots.port, bad_path, token=bad.get("token"))
                if s.status not in (status, 429):   # 429: the address holds its 4 streams
                    errors.append(s.status)
                refused[0] += 1
            except OSError as e:
                errors.append(repr(e))

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        for attempt in range(5):
            opened = [slots.stream(live_path("liveShared"), token=token) for _ in range(3)]
            opened.append(slots.stream(live_path("livePub")))
            assert [s.status for s in opened] == [200] * 4, (attempt, [(s.status, s.body) for s in opened])
            for s in opened:
                s.close()
            assert _wait_streams(slots, 0), "slots were not given back"
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert not errors, errors[:5]
    assert refused[0] >= 20, refused[0]
    assert _wait_streams(slots, 0)
