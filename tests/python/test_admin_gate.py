"""The admin API's one gate: a caller that is not the admin is refused on a
reader, before any writer work (the write-operation counter does not move),
and admin answers are never cached."""
import time

import pytest

from drills.live_paths import metric
from roost_harness import ADMIN_TOKEN, FAST_HASHING, running_roostd

CONFIG = f"admin_token: {ADMIN_TOKEN}\ndefault_permission: public\n{FAST_HASHING}"
WRITES = [("POST", "/admin/webhooks/endpoints", {"name": "x", "url": "http://127.0.0.1:9/h", "events": ["message.created"]}),
          ("DELETE", "/admin/webhooks/endpoints/x", None),
          ("POST", "/admin/webhooks/endpoints/x/enable", None),
          ("POST", "/admin/webhooks/deliveries/1/retry", None),
          ("POST", "/admin/webhooks/endpoints/x/disable", None),
          ("DELETE", "/admin/users/u1/sessions", None),
          ("POST", "/admin/roles", {"name": "x"}),
          ("DELETE", "/admin/roles/x", None),
          ("PUT", "/admin/roles/x/members/u1", None),
          ("DELETE", "/admin/roles/x/members/u1", None)]


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        settle(d)
        yield d


def settle(d, quiet=1.5, limit=15.0):
    """Waits out the start-up's own writer jobs (the rule re-stamper's first
    pass): the counter must stand still for `quiet` seconds. An idle daemon
    takes no writer job after that (the mail and account-job queues are
    looked at on a reader)."""
    deadline = time.monotonic() + limit
    last, since = metric(d.port, "roost_write_operations_total"), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, "an idle roostd keeps taking writer jobs"
        time.sleep(0.1)
        now = metric(d.port, "roost_write_operations_total")
        if now != last:
            last, since = now, time.monotonic()


@pytest.mark.parametrize("who", ["anonymous", "user"])
def test_admin_writes_by_others_are_refused_before_the_writer(roost, who):
    token = None if who == "anonymous" else roost.sign_up(f"stranger-{who}")["token"]
    before = metric(roost.port, "roost_write_operations_total")
    for method, path, body in WRITES:
        r = roost.call(method, path, body, token=token)
        assert r.status in (401, 403), (method, path, r)
    assert metric(roost.port, "roost_write_operations_total") == before


def test_admin_answers_are_not_cached(roost):
    for path in ("/admin/webhooks/endpoints", "/admin/hooks", "/admin/stats", "/admin/backups", "/admin/roles"):
        r = roost.call("GET", path, token=ADMIN_TOKEN)
        assert r.status in (200, 409), (path, r)
        if r.status == 200:
            assert r.header("Cache-Control") == "no-store", path
