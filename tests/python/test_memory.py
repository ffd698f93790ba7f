"""Memory bounds that hold without timing anything: SQLite's page caches stay
inside `sqlite_cache_bytes`, the decoy hash costs nothing at start-up, and
password hashes take their cost's memory (see docs/MEMORY.md).

VmHWM (the kernel's peak resident size) is read from /proc; it only grows,
so a test reads it before and after one step and compares."""

import json
import pathlib
import re
import tempfile
import urllib.parse


from roost_harness import Roostd

MiB = 1 << 20
# libsodium's interactive level and OWASP's minimum, per hash.
INTERACTIVE, OWASP = 64 * MiB, 19 * MiB
# Every connection other than the writer's and the readers' keeps this much
# page cache at most (SQLiteMemory.lookupCacheBytes).
LOOKUP_CACHE = 128 << 10


def roostd(tmp, config):
    """roostd on `tmp`/data with `config` (a `with` starts and stops it); the data outlives it (for restarts)."""
    return Roostd(tmp, "default_permission: public\n" + config)


def peak_bytes(daemon):
    """The process's VmHWM in bytes."""
    text = pathlib.Path(f"/proc/{daemon.proc.pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", text, re.M).group(1)) * 1024


def gauge(daemon, name):
    text = daemon.call("GET", "/metrics").raw.decode()
    return int(float(re.search(rf"^{name} (\S+)$", text, re.M).group(1)))


def test_sqlite_page_caches_stay_within_the_budget():
    budget = 2 * MiB
    # Few look-up connections: one hasher, one upload worker, and the fixed
    # ones (webhook scheduler, live fan-out, console stats, checkpointer).
    config = f"sqlite_cache_bytes: {budget}\nloops: 2\nreaders: 2\nslow_readers: 1\nhash_concurrency: 1\nupload_workers: 1\n"
    lookups = 6
    with tempfile.TemporaryDirectory(prefix="roost-mem-") as tmp, roostd(tmp, config) as app:
        # About 12 MB of documents: six times the whole budget.
        for batch in range(60):
            ops = [{"method": "POST", "path": "/items", "body": {"n": batch * 100 + i, "pad": "x" * 2000}}
                   for i in range(100)]
            r = app.call("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
        # Unindexed filters read every page of the collection, on every reader.
        for i in range(12):
            r = app.call("GET", "/items?limit=5&query=" + urllib.parse.quote(json.dumps({"pad": {"$regex": f"^y{i}"}})))
            assert r.status == 200 and r.body == [], r
        held = gauge(app, "roost_sqlite_page_cache_bytes")
        # SQLite counts a page with its header (about 3% over the page) and
        # rounds cache_size to whole pages: 10% covers both.
        bound = 1.1 * (budget + lookups * LOOKUP_CACHE)
        assert held <= bound, f"{held} bytes of page cache, bound {bound:.0f}"
        # The caches did fill (the gauge is live): the writer's quarter plus
        # the two readers' shares (the other three quarters split among two
        # readers, a slow reader and the two loops' own connections) are 55%
        # of the budget; the loops' shares stay empty (lists run on readers).
        assert held >= budget * 3 // 8, held


def test_the_decoy_hash_costs_nothing_at_start_up_and_a_full_hash_at_log_in():
    with tempfile.TemporaryDirectory(prefix="roost-mem-") as tmp, roostd(tmp, "password_cost: interactive\n") as app:
        # Hashing a decoy at start-up held 64 MiB (131 MiB peak in total);
        # without it the peak is about 60 MiB (docs/MEMORY.md). Half the hash
        # below 131 MiB separates the two with room for noise either way.
        at_start = peak_bytes(app)
        assert at_start < 131 * MiB - INTERACTIVE // 2, f"VmHWM {at_start >> 20} MiB after start-up"
        # An unknown username is checked against the decoy: a real Argon2id
        # run at the configured cost (a malformed decoy fails at once and
        # allocates nothing), so it costs what a real log-in costs.
        r = app.log_in("nobody", "whatever password")
        assert r.status == 401, r
        assert peak_bytes(app) >= at_start + INTERACTIVE // 2


def test_owasp_cost_hashes_in_19_mib_and_old_hashes_still_verify():
    with tempfile.TemporaryDirectory(prefix="roost-mem-") as tmp:
        with roostd(tmp, "password_cost: interactive\n") as app:
            app.sign_up("early", "interactive password")
        with roostd(tmp, "password_cost: owasp\n") as app:
            before = peak_bytes(app)
            app.sign_up("late", "owasp password")
            # A hash at the OWASP cost holds 19 MiB, not 64.
            assert peak_bytes(app) < before + (OWASP + INTERACTIVE) // 2
            assert app.log_in("late", "owasp password").status == 200
            # The early user's hash names its own cost (m=65536) and verifies under it.
            r = app.log_in("early", "interactive password")
            assert r.status == 200, r
            assert peak_bytes(app) >= before + INTERACTIVE // 2
            assert app.log_in("early", "wrong password").status == 401
