"""`files_store: s3` against a real S3 stand-in (moto_server, signatures
checked): where the bytes land, multipart uploads, serving identical to the
local store, deletes, the start-up sweep, an unreachable store, and start-up
refusals. The file API itself runs on both stores in test_files.py."""

import hashlib
import itertools
import json
import os
import sqlite3
import subprocess
import time

import pytest

from roost_harness import Roostd, binary, clean_env, png
from roost_harness.s3 import MotoS3

BASE = "files_permission: public\ndefault_permission: public\nthumbnail_workers: 1\n"
_prefixes = itertools.count()


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    with MotoS3(tmp_path_factory.mktemp("moto")) as s3:
        yield s3


@pytest.fixture
def s3d(moto, tmp_path):
    """roostd on the module's bucket, under a prefix of its own, 5 MiB multipart threshold."""
    prefix = f"t{next(_prefixes)}"
    d = Roostd(tmp_path, BASE + moto.config(prefix=prefix, threshold_mib=5), env=moto.env())
    d.prefix = prefix
    with d:
        yield d


def upload(daemon, body, content_type="application/octet-stream"):
    status, _, raw = daemon.request("POST", "/files", body, {"Content-Type": content_type})
    assert status == 201, raw
    return json.loads(raw)


def test_the_201_comes_with_the_object_in_the_bucket(moto, s3d):
    body = os.urandom(70_000)
    meta = upload(s3d, body)
    key = f"{s3d.prefix}/{meta['_id']}/original"
    assert moto.get(key) == body
    assert "-" not in moto.keys(key)[key], "a small upload is one PUT"
    assert s3d.request("GET", f"/files/{meta['_id']}")[::2] == (200, body)


def test_an_upload_above_the_threshold_goes_up_in_parts(moto, s3d):
    body = os.urandom((6 << 20) + 123)
    meta = upload(s3d, body)
    key = f"{s3d.prefix}/{meta['_id']}/original"
    assert moto.keys(key)[key].strip('"').endswith("-2"), "6 MiB over a 5 MiB threshold: two parts"
    assert meta["sha256"] == hashlib.sha256(body).hexdigest()
    status, _, got = s3d.request("GET", f"/files/{meta['_id']}")
    assert status == 200 and got == body
    uploads = moto.client.list_multipart_uploads(Bucket=moto.bucket).get("Uploads", [])
    assert uploads == [], "no multipart upload left open"


SERVED_HEADERS = ("etag", "content-type", "content-length", "content-range", "cache-control", "accept-ranges",
                  "content-disposition")


@pytest.mark.parametrize("size", [1000, 200_000])
def test_range_etag_and_304_answer_as_the_local_store_does(s3d, tmp_path, size):
    body = os.urandom(size)
    with Roostd(tmp_path / "local", BASE) as local:
        ids = {d: upload(d, body)["_id"] for d in (local, s3d)}
        etag = f'"{hashlib.sha256(body).hexdigest()}"'
        cases = [{}, {"Range": "bytes=0-9"}, {"Range": "bytes=-5"}, {"Range": f"bytes={size // 2}-"},
                 {"Range": f"bytes={size}-"}, {"Range": "bytes=5-2"}, {"If-None-Match": etag},
                 {"Range": "bytes=0-9", "If-Range": '"other"'}, {"Range": f"bytes=10-{size * 2}"}]
        for headers in cases:
            answers = []
            for d in (local, s3d):
                r = d.call("GET", f"/files/{ids[d]}", headers=headers)
                answers.append((r.status, {h: r.headers.get(h) for h in SERVED_HEADERS}, r.raw))
            assert answers[0] == answers[1], headers


def test_a_thumbnail_lives_beside_its_original_and_delete_removes_all(moto, s3d):
    meta = upload(s3d, png(320, 240, 7), "image/png")
    file_id = meta["_id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        meta = s3d.call("GET", f"/files/{file_id}/meta").body
        if all(t["state"] == "ready" for t in meta["thumbnails"].values()):
            break
        time.sleep(0.2)
    assert s3d.call("GET", f"/files/{file_id}/thumbnail?w=40&h=40&fit=cover").status == 200
    assert sorted(moto.keys(f"{s3d.prefix}/{file_id}/")) == [
        f"{s3d.prefix}/{file_id}/{k}" for k in ("original", "thumb/128.webp", "thumb/512.webp", "thumb/w40-h40-cover.webp")]
    assert not list((s3d.data_dir / "files" / "staging").iterdir()), "the local copy for thumbnails is released"
    assert s3d.call("DELETE", f"/files/{file_id}").status == 200
    deadline = time.monotonic() + 10
    while moto.keys(f"{s3d.prefix}/{file_id}/") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert moto.keys(f"{s3d.prefix}/{file_id}/") == {}
    assert s3d.call("GET", f"/files/{file_id}").status == 404


def test_the_start_up_sweep_removes_objects_without_rows(moto, s3d):
    kept = upload(s3d, b"kept")["_id"]
    orphan = "0123456789abcdef01234567"
    for key in (f"{s3d.prefix}/{orphan}/original", f"{s3d.prefix}/{orphan}/thumb/128.webp", f"{s3d.prefix}/notes.txt"):
        moto.client.put_object(Bucket=moto.bucket, Key=key, Body=b"x")
    s3d.restart()  # default grace (an hour): a fresh orphan may be another node's upload in flight
    assert f"{s3d.prefix}/{orphan}/original" in moto.keys(s3d.prefix + "/")
    s3d.config_path.write_text(s3d.config_path.read_text() + "  orphan_grace_seconds: 0\n")
    s3d.restart()
    assert sorted(moto.keys(s3d.prefix + "/")) == [f"{s3d.prefix}/{kept}/original", f"{s3d.prefix}/notes.txt"]
    assert "bucket swept" in s3d.log_text()


def test_an_unreachable_store_answers_503_and_keeps_no_row(tmp_path):
    with MotoS3(tmp_path) as s3, Roostd(tmp_path / "d", BASE + s3.config(), env=s3.env()) as d:
        stored = upload(d, b"before the outage")["_id"]
        image = upload(d, png(64, 48, 3), "image/png")["_id"]
        s3.stop()
        r = d.call("POST", "/files", raw_body=b"during the outage", headers={"Content-Type": "text/plain"})
        assert r.status == 503 and r.body["error"] == "StorageUnavailable" and r.headers["retry-after"], r.raw
        r = d.call("GET", f"/files/{stored}")
        assert r.status == 503 and r.body["error"] == "StorageUnavailable", r.raw
        r = d.call("GET", f"/files/{image}/thumbnail?size=128")
        assert r.status == 503 and r.body["error"] == "StorageUnavailable", r.raw
        assert d.call("GET", f"/files/{stored}/meta").status == 200
        assert d.call("POST", "/notes", {"text": "the database still works"}).status == 201
        assert d.call("GET", "/healthz").status == 200
        assert "S3 unreachable" in d.log_text()
    with sqlite3.connect(d.data_dir / "roost.db") as db:
        assert sorted(r[0] for r in db.execute("SELECT id FROM _files")) == sorted([stored, image])


@pytest.mark.parametrize("problem, expected", [
    ("wrong secret", "SignatureDoesNotMatch"),
    ("unknown key", "InvalidAccessKeyId"),
    ("no bucket", "NoSuchBucket"),
    ("no credentials", "ROOST_S3_ACCESS_KEY_ID and ROOST_S3_SECRET_ACCESS_KEY must be set"),
])
def test_start_up_refuses_a_store_it_cannot_use(moto, tmp_path, problem, expected):
    env, config = moto.env(), BASE + moto.config()
    if problem == "wrong secret":
        env["ROOST_S3_SECRET_ACCESS_KEY"] = "not-the-secret"
    elif problem == "unknown key":
        env["ROOST_S3_ACCESS_KEY_ID"] = "AKIANOSUCHKEY0000000"
    elif problem == "no bucket":
        env["ROOST_S3_BUCKET"] = "no-such-bucket"
    else:
        env = {}
    d = Roostd(tmp_path, config, env=env).start(wait=False)
    try:
        code = d.proc.wait(timeout=30)
    finally:
        d.close()
    log = d.log_text()
    assert code != 0 and expected in log, log
    assert "files_store: s3" in log
    assert "Fatal error" not in log and "Illegal instruction" not in log, "a clear exit, not a crash"


def test_a_backup_indexes_the_files_in_the_bucket_and_says_it_did_not_copy_them(s3d, tmp_path):
    ids = sorted(upload(s3d, os.urandom(5000 + i))["_id"] for i in range(2))
    to = tmp_path / "backups"
    run = subprocess.run([str(binary()), "backup", "--config", str(s3d.config_path), "--data-dir", str(s3d.data_dir), "--to", str(to)],
                         env=clean_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "2 files that were NOT copied" in run.stdout and f"s3://roost-files/{s3d.prefix}/" in run.stdout, run.stdout
    (backup,) = [p for p in to.iterdir() if p.name.startswith("roost-")]
    assert not (backup / "files" / "objects").exists()
    lines = [l.split() for l in (backup / "files-in-object-store.txt").read_text().splitlines() if not l.startswith("#")]
    assert [l[0] for l in lines] == ids
    for file_id, size, digest in lines:
        meta = s3d.call("GET", f"/files/{file_id}/meta").body
        assert (int(size), digest) == (meta["size"], meta["sha256"])
    verified = subprocess.run([str(binary()), "verify-backup", str(backup)], env=clean_env(), capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
