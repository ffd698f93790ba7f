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
