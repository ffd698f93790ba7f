"""Signed file URLs across nodes (issues #40 and #17): the signing key is the
database's own secret, so a URL one node signs loads from every node of a
cluster (one PostgreSQL database, one S3 bucket), and a URL signed by
another cluster's database does not."""

import pytest

from roost_harness import assert_error, png
from roost_harness.cluster import Cluster
from roost_harness.postgres import postgres_cluster  # noqa: F401 (fixture)
from roost_harness.s3 import MotoS3

CONFIG = "password_cost: owasp\ndefault_permission: shared\nfiles_permission: private\nthumbnail_sizes: [32]\nthumbnail_workers: 1\n"


@pytest.fixture(scope="module")
def clusters(tmp_path_factory, postgres_cluster):  # noqa: F811
    tmp = tmp_path_factory.mktemp("signed-cluster")
    with MotoS3(tmp_path_factory.mktemp("moto")) as s3, \
            Cluster(tmp / "one", postgres_cluster.database(), s3, CONFIG, count=2, prefix="one") as one, \
            Cluster(tmp / "two", postgres_cluster.database(), s3, CONFIG, count=1, prefix="two") as two:
        yield one, two


def test_a_url_signed_on_one_node_loads_from_another(clusters):
    (a, b), (elsewhere,) = clusters
    body = a.sign_up("nodes-user")
    token = body["token"]
    r = a.call("POST", "/files", token=token, raw_body=png(64, 48, 4), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    file_id = r.body["_id"]
    original = a.call("POST", f"/files/{file_id}/url", token=token).body["url"]
    thumb = b.call("POST", f"/files/{file_id}/url", {"thumbnail": True}, token=token).body["url"]
    for node in (a, b):
        assert node.call("GET", original).status == 200
        r = node.call("GET", thumb)
        assert r.status == 200 and r.header("Content-Type") == "image/webp", r
    # Another database signs with another key: its URLs are not ours (and ours not its).
    other = elsewhere.sign_up("elsewhere")
    r = elsewhere.call("POST", "/files", token=other["token"], raw_body=b"elsewhere", headers={"Content-Type": "text/plain"})
    foreign = elsewhere.call("POST", f"/files/{r.body['_id']}/url", token=other["token"]).body["url"]
    assert elsewhere.call("GET", foreign).status == 200
    assert_error(a.call("GET", foreign), 403, "InvalidSignature")
    assert_error(elsewhere.call("GET", original), 403, "InvalidSignature")
