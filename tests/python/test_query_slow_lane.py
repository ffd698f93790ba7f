"""Long scans move to the slow lane, clients that overran a slice start there,
and a read past the time limit is stopped with a JSON 503."""

import contextlib
import pathlib
import random
import shutil
import tempfile

import pytest

from roost_harness import ADMIN_TOKEN, Roostd, assert_error, engine
from query_plans_support import q


SLOW_CONFIG = f"""
default_permission: public
# fill() seeds thousands of rows in batches from one caller.
rate_limits: {{batches: {{per_second: 0}}}}
admin_token: {ADMIN_TOKEN}
readers: 2
slow_readers: 1
read_slice_ms: 10
query_time_limit: 30
"""


ROWS = 30000


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A stopped daemon's data directory holding ROWS rows in /big, written once for the module:
    each test starts its own daemon (its own config, counters and client state) on a copy."""
    if engine.name() != "sqlite":
        return None
    seed = Roostd(tmp_path_factory.mktemp("slow-seed"), SLOW_CONFIG).start()
    try:
        fill(seed, ROWS)
    finally:
        code = seed.stop()
    assert code == 0, seed.log_tail()
    return seed.data_dir


@contextlib.contextmanager
def slow_world(filled, extra="", config=SLOW_CONFIG):
    """roostd with `config` + `extra` on a copy of `filled` (or, off SQLite, on ROWS rows written now)."""
    with tempfile.TemporaryDirectory(prefix="roost-slow-lane-") as tmp:
        if filled is not None:
            shutil.copytree(filled, pathlib.Path(tmp) / "data")
        d = Roostd(tmp, config + extra).start()
        try:
            if filled is None:
                fill(d, ROWS)
            yield d
        finally:
            d.stop(timeout=10, strict=False)


# Behind a trusted proxy (the test itself), each request names its client.
PROXIED = 'trusted_proxies: ["127.0.0.1"]\n'
ATTACKER = {"X-Forwarded-For": "203.0.113.7"}
BYSTANDER = {"X-Forwarded-For": "198.51.100.20"}


def slow_lane_reads(d, reason):
    """`roost_slow_lane_reads_total{reason=...}` from /metrics."""
    text = d.call("GET", "/metrics", token=ADMIN_TOKEN).raw.decode()
    for line in text.splitlines():
        if line.startswith("roost_slow_lane_reads_total") and f'reason="{reason}"' in line:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no roost_slow_lane_reads_total{{reason={reason}}} in /metrics")


def fill(d, n):
    rng = random.Random(7)
    for start in range(0, n, 100):
        ops = [{"method": "POST", "path": "/big", "body": {"s": rng.random(), "t": "x" * rng.randint(0, 40)}}
               for _ in range(start, min(n, start + 100))]
        assert d.call("POST", "/_batch", {"operations": ops}).status == 200


# An unindexed sort under a regex: a full scan of every row, well past a 10 ms slice.
def slow_list(regexes):
    """An unindexed sort under `regexes` regexes per row: a full scan whose cost grows with `regexes`."""
    letters = "abcdefghijklmnopqrstuvwyz"
    flt = {"$or": [{"t": {"$regex": f"{letters[i % 25]}{i}x*$"}} for i in range(regexes)] + [{"t": {"$regex": "xxx$"}}]}
    return f"/big?limit=5&sort={q({'s': -1})}&query={q(flt)}"


SLOW_LIST = slow_list(12)


def test_long_scans_move_to_the_slow_lane_and_other_reads_go_on(filled):
    import concurrent.futures
    import time
    with slow_world(filled, PROXIED) as d:
        one = d.call("GET", "/big?limit=1").body[0]["_id"]
        # Heavy enough to take a while on this machine, however fast it is.
        regexes, alone = 12, 0.0
        while True:
            slow = slow_list(regexes)
            started = time.monotonic()
            assert d.call("GET", slow, headers=ATTACKER).status == 200
            alone = time.monotonic() - started
            if alone > 0.6 or regexes >= 384:
                break
            regexes *= 2
        assert alone > 0.3, f"the scan took only {alone:.3f} s even with {regexes} regexes"
        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            scans = [pool.submit(lambda: d.call("GET", slow, headers=ATTACKER)) for _ in range(6)]
            time.sleep(0.1)
            latencies = []
            for _ in range(20):
                t0 = time.monotonic()
                assert d.call("GET", f"/big/{one}", headers=BYSTANDER).status == 200
                latencies.append(time.monotonic() - t0)
            results = [(f.result(), 0) for f in scans]
        assert all(r.status == 200 and len(r.body) == 5 for r, _ in results), [r for r, _ in results]
        # Six scans queue on one slow reader; a GET by id never waits for one
        # (on two readers they would hold it up for about a scan's time).
        assert max(latencies) < alone / 2, (alone, latencies)
        expected = [x["_id"] for x in results[0][0].body]
        assert all([x["_id"] for x in r.body] == expected for r, _ in results)


def test_a_client_that_overran_a_slice_starts_its_next_reads_on_the_slow_lane(filled):
    """One client's heavy queries, one after another, cost the readers one
    slice in all, not one each: after the first overran, its reads start on
    the slow lane (for 10 s); another client's reads do not."""
    with slow_world(filled, PROXIED) as d:
        one = d.call("GET", "/big?limit=1", headers=BYSTANDER).body[0]["_id"]
        overran, listed = slow_lane_reads(d, "overran"), slow_lane_reads(d, "address")
        assert listed == 0
        assert d.call("GET", SLOW_LIST, headers=ATTACKER).status == 200
        assert slow_lane_reads(d, "overran") == overran + 1
        for _ in range(3):
            assert d.call("GET", SLOW_LIST, headers=ATTACKER).status == 200
        assert d.call("GET", f"/big/{one}", headers=ATTACKER).status == 200
        # All four went straight to the slow lane: none ran a slice first.
        assert slow_lane_reads(d, "address") == 4
        assert slow_lane_reads(d, "overran") == overran + 1
        for _ in range(3):
            assert d.call("GET", f"/big/{one}", headers=BYSTANDER).status == 200
        assert slow_lane_reads(d, "address") == 4


def test_a_read_past_the_time_limit_is_stopped_with_a_json_503(filled):
    config = SLOW_CONFIG.replace("query_time_limit: 30", "query_time_limit: 0.05")
    with slow_world(filled, config=config) as d:
        r = d.call("GET", SLOW_LIST)
        assert_error(r, 503, "QueryTimeout")
        assert r.header("Retry-After")
        assert d.call("GET", "/big?limit=3").status == 200
