"""Shared by the live-update tests (test_live*.py): the daemons' configurations, a roostd
with keep-alive clients per token, the module-scoped `roost`, `limits` and `people`
fixtures, and assertions on streams."""

import urllib.parse

import pytest

from drills.common import ADMIN_TOKEN
from drills.live import LiveStream, cursor_seq
from roost_harness import Client, Roostd, assert_error, cursors  # noqa: F401 (assert_error: for the tests)


CONFIG = f"""\
password_cost: owasp
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
default_permission: shared
collections:
  livePub: {{permission: public}}
  liveShared: {{permission: shared}}
  livePriv: {{permission: private}}
  liveRO: {{permission: readonly}}
"""

LIMITS_CONFIG = CONFIG + "live_max_connections: 3\nlive_buffer_bytes: 65536\nsession_lifetime: 3\n"
PER_ADDRESS_CONFIG = CONFIG + 'live_max_connections: 10\nlive_max_per_address: 2\ntrusted_proxies: ["127.0.0.1"]\n'


PASSWORD = "correct horse battery"


def q(s):
    return urllib.parse.quote(s, safe="")


class Node(Roostd):
    """A roostd with a keep-alive client per token (no retries: a dropped connection is an error here)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        cursors.register(self.data_dir)   # event ids are sealed: the checks open them with its key

    def api(self, token=None):
        return Client(self.port, timeout=15, token=token)

    def stream(self, path, token=None, **kw):
        s = LiveStream(self.port, path, token=token, **kw)
        if s.status == 200:
            assert s.wait_ready(10), f"no retry: preamble on {path}"
        return s


def module_node(name, config):
    """A module-scoped fixture called `name`: a Node with `config`, stopped after the module."""
    @pytest.fixture(scope="module", name=name)
    def node(tmp_path_factory):
        n = Node(tmp_path_factory.mktemp(name), config)
        n.start()
        yield n
        n.stop()
        n.close()
    return node


roost = module_node("roost", CONFIG)
limits = module_node("limits", LIMITS_CONFIG)


@pytest.fixture(scope="module")
def people(roost):
    return {name: roost.new_user(name) for name in ("alice", "bob", "carol")}


def kinds(events):
    return [(e.kind, e.entity_id) for e in events]


def assert_ascending(events):
    seqs = [cursor_seq(e.id) for e in events]
    assert all(s is not None for s in seqs), events
    assert seqs == sorted(set(seqs)), f"ids not strictly ascending: {seqs}"


def until_sentinel(stream, sentinel_id, timeout=10):
    assert stream.wait(lambda s: any(e.entity_id == sentinel_id for e in s.events) or s.end, timeout), \
        f"sentinel {sentinel_id} did not arrive: {stream.snapshot()}"
    return [e for e in stream.snapshot()]
