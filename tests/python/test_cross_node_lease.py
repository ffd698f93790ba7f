"""Issue #17: "a node killed mid-job loses its claim to another node after a
lease", end to end. Two roostd nodes share one PostgreSQL database and one
bucket, with `claim_lease_seconds: 10`. Node A claims a webhook delivery and
is killed with `kill -9` while the receiver holds A's request unanswered.
Node B may not send the delivery while A's lease runs, and sends it once
the lease has passed: one 2xx delivery, recorded as delivered."""

import time
import uuid

import pytest

from roost_harness import ADMIN_TOKEN
from roost_harness.cluster import Cluster, wait_until
from roost_harness.postgres import postgres_cluster  # noqa: F401 (fixture)
from roost_harness.s3 import MotoS3
from webhook_support import SECRET, Receiver, recorded_delivery

LEASE = 10


def config(receiver):
    return f"""admin_token: {ADMIN_TOKEN}
default_permission: public
claim_lease_seconds: {LEASE}
collections:
  hooked: {{permission: public}}
webhooks:
  retry_schedule: [0.2, 0.3, 0.5, 1, 1]
  timeout: 60
  endpoints:
    - name: hook
      url: {receiver.url}
      secret: {SECRET}
      events: [hooked.created]
"""


@pytest.fixture
def receiver():
    r = Receiver(plan=["hang"]).start()
    yield r
    r.stop()


@pytest.fixture
def pair(tmp_path, postgres_cluster, receiver):  # noqa: F811 (fixture)
    (tmp_path / "moto").mkdir()
    with MotoS3(tmp_path / "moto") as s3:
        cluster = Cluster(tmp_path / "cluster", postgres_cluster.database("lease"), s3, config(receiver), count=2)
        with cluster:
            yield cluster


def test_a_node_killed_mid_delivery_loses_it_to_another_node_after_the_lease(pair, receiver):
    a, b = pair
    b.stop()  # only A dispatches, so A is the one that claims
    tag = uuid.uuid4().hex
    assert a.call("POST", "/hooked", {"tag": tag}).status == 201
    assert receiver.wait_for(lambda r: len(r.requests) == 1, timeout=30), pair.logs()
    webhook_id = receiver.requests[0][0]["webhook-id"]
    a.kill9()
    killed = time.monotonic()
    b.start(timeout=60)

    def delivered():
        return any(wid == webhook_id for wid, _ in receiver.accepted())

    assert wait_until(delivered, timeout=LEASE + 40), pair.logs()
    # A renewed its claim until it died: B could not take it before the lease passed.
    assert time.monotonic() - killed >= LEASE - 1
    assert len(receiver.requests) == 2 and receiver.requests[1][0]["webhook-id"] == webhook_id
    rows = recorded_delivery(b, webhook_id)
    mine = [row for row in rows if row["webhookId"] == webhook_id]
    assert [row["status"] for row in mine] == ["delivered"], rows
    # Nothing more arrives: the delivery is done, on one node.
    wait_until(lambda: False, timeout=2)
    assert len(receiver.requests) == 2
