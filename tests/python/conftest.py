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


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path
        if path.name in SERIAL_FILES or (path.parent.name == "drills" and path.name not in PARALLEL_DRILLS):
            item.add_marker(pytest.mark.serial)
