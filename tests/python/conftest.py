"""Shared fixtures: one roostd on a free loopback port for the session, and a
test CA for the TLS and proxy tests. The daemon wrapper and HTTP helpers are
in tests/roost_harness."""

import pytest

from roost_harness import Roostd
from roost_harness.pki import make_pki

# Collections the daemon is configured with. The "indexed" twin of the random
# test collection has value indexes on every path the random filters use most,
# so the same filters run through both the JSON-scan and the index code paths.
CONFIG_YAML = """\
default_permission: public
collections:
  docsIndexed:
    indexes: [a, b.c, b.d, arr, objs.x, objs.y, name, n, flag]
  locations:
    indexes: [name, categories, "location:geo"]
"""


@pytest.fixture(scope="session")
def roostd(tmp_path_factory):
    with Roostd(tmp_path_factory.mktemp("roost-pytest"), CONFIG_YAML) as daemon:
        yield daemon


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A test CA (ca.pem) and two server certificates (first, second) for localhost."""
    return make_pki(tmp_path_factory.mktemp("pki"))


# Files whose tests measure time, memory or load (throttles, budgets, slow lanes,
# kill -9 under load, idle limits): with `make test`'s parallel workers they run
# afterwards, alone (`-m serial`), so another worker's load cannot skew them.
# (test_live.py, test_session_revocation.py, test_nearest_dense.py, test_pg_connections.py
# (connection counts) and test_feed_cost.py (bytes stored and answered, states replayed) check
# outcomes with generous waits, not time, memory or load: they run in the parallel part.)
SERIAL_FILES = {
    "test_accounts_address_throttle.py", "test_accounts_password_throttle.py", "test_accounts_signup_flood.py",
    "test_client_address.py", "test_cross_node.py", "test_cross_node_lease.py", "test_daemon_lifecycle.py",
    "test_hostile_runaway.py", "test_http_strict.py", "test_live_bounds.py", "test_live_limits.py",
    "test_memory.py", "test_postgres_outage.py", "test_query_slow_lane.py",
    "test_rate_limits.py", "test_references_recovery.py", "test_resolve_bounds.py",
    "test_systemd.py", "test_console_scale.py",
}

# Drills that judge answers only (not time, memory or load) run in the parallel part.
PARALLEL_DRILLS = {"test_drills_schemathesis.py"}


# The parallel part hands out whole files in collection order (`--dist loadfile
# --no-loadscope-reorder`, Makefile): the longest go first, so that no long file is left running
# alone at the end while the other workers idle (xdist's own order, most tests first, put the
# one-test schemathesis run, 185 s, last). Longest first by per-file time measured with
# `--durations=0` (debug build, 29 Nov 2026; the longer of SQLite's and PostgreSQL's), except the
# schemathesis drill (below); the files not named follow, most tests first.
LONGEST_FIRST = [
    "test_console_pages.py", "test_push.py", "test_query_plans.py",
    "test_rules.py", "test_console_collections.py", "test_files.py", "test_roostkit_package.py",
    # Not first: beside the browser tests at the start, its sign-ups met the hash pool's 3 s back-off (503) at load 9.
    "test_drills_schemathesis.py",
    "test_runtime_collections.py", "test_accounts_email.py", "test_rules_oracle.py", "test_push_transport.py",
    "test_hostile.py", "test_account_deletion.py", "test_script_jobs.py", "test_caddy_proxy.py",
    "test_console.py", "test_feed_cost.py", "test_push_sync.py", "test_nginx_proxy.py",
    "test_accounts_idtoken.py", "test_session_revocation.py",
]


def longest_first(items):
    """`items` in place, file by file: LONGEST_FIRST's files in its order, then the rest, most tests first."""
    tests_in = {}
    for item in items:
        tests_in[item.path] = tests_in.get(item.path, 0) + 1
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), -tests_in[item.path], str(item.path)))


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path
        if path.name in SERIAL_FILES or (path.parent.name == "drills" and path.name not in PARALLEL_DRILLS):
            item.add_marker(pytest.mark.serial)
    if hasattr(config, "workerinput"):                 # an xdist worker (xdist sets its `dist` option to "no")
        longest_first(items)
