"""File store crash safety: kill -9 during an upload stream leaves only whole
files that each have their row, and thumbnail jobs cut short run again after
a restart. Images are generated here (zlib); nothing binary is committed."""

import hashlib
import json
import os
import socket
import tempfile
import threading
import time

import pytest

from roost_harness import Roostd, engine, png, png_from_chunks
from roost_harness.s3 import MotoS3

CONFIG = "files_permission: public\ndefault_permission: public\nthumbnail_workers: 1\n"


class FilesDaemon(Roostd):
    """roostd with CONFIG, and what the file tests look at: rows, jobs, stored
    objects: on disk, or in the bucket of `s3` (a running MotoS3)."""

    def __init__(self, tmp, s3=None):
        self.s3 = s3
        self.base_config = CONFIG + (s3.config() + "  orphan_grace_seconds: 0\n" if s3 else "")
        super().__init__(tmp, self.base_config, env=s3.env() if s3 else None)

    def upload_pngs(self, count, width, height, first_seed):
        """Uploads `count` distinct PNGs; returns their ids."""
        ids = []
        for i in range(count):
            status, _, raw = self.request("POST", "/files", png(width, height, first_seed + i), {"Content-Type": "image/png"})
            assert status == 201, raw
            ids.append(json.loads(raw)["_id"])
        return ids

    def rows(self):
        return {i: json.loads(d) for i, d in engine.sql(self.data_dir, "SELECT id, doc FROM _files")}

    def jobs(self):
        return [r[0] for r in engine.sql(self.data_dir, "SELECT file_id FROM _file_jobs")]

    def objects(self):
        """The stored originals' ids."""
        if self.s3:
            return {k.split("/")[1] for k in self.s3.keys("files/") if k.endswith("/original")}
        return {p.name for p in (self.data_dir / "files" / "objects").glob("*/*") if p.is_file()}

    def object_bytes(self, file_id):
        if self.s3:
            return self.s3.get(f"files/{file_id}/original")
        return next((self.data_dir / "files" / "objects").glob(f"*/{file_id}")).read_bytes()

    def thumbnail_names(self, file_id):
        if self.s3:
            return sorted(k.rsplit("/", 1)[1] for k in self.s3.keys(f"files/{file_id}/thumb/"))
        return sorted(p.name for p in (self.data_dir / "files" / "thumbs").glob(f"*/{file_id}/*"))

    def remove_thumbnails(self, file_id):
        for name in self.thumbnail_names(file_id):
            if self.s3:
                self.s3.delete(f"files/{file_id}/thumb/{name}")
            else:
                next((self.data_dir / "files" / "thumbs").glob(f"*/{file_id}/{name}")).unlink()

    def thumbnail_writes(self, file_id, name):
        """A mark that changes when the thumbnail is written again: the inode
        (a remake renames a new file into place), or the bucket's version count."""
        if self.s3:
            return self.s3.versions(f"files/{file_id}/thumb/{name}")
        return next((self.data_dir / "files" / "thumbs").glob(f"*/{file_id}/{name}")).stat().st_ino

    def wait_for_thumbnails(self, ids, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            metas = [json.loads(self.request("GET", f"/files/{i}/meta")[2]) for i in ids]
            if all(all(t["state"] == "ready" for t in m["thumbnails"].values()) for m in metas) and not self.jobs():
                return metas
            time.sleep(0.2)
        pytest.fail("thumbnail jobs did not finish")


@pytest.fixture(params=["local", "s3"])
def daemon(request):
    """Every test here runs on the local file store and on an S3 bucket (moto)."""
    with tempfile.TemporaryDirectory(prefix="roost-files-") as tmp:
        s3 = MotoS3(tmp, versioning=True).start() if request.param == "s3" else None
        d = FilesDaemon(tmp, s3)
        try:
            yield d
        finally:
            d.stop()
            if s3:
                s3.stop()


def test_kill9_during_uploads_leaves_whole_files_with_rows(daemon):
    daemon.start()
    images = [png(400 + 37 * i, 300 + 11 * i, i + 1) for i in range(8)]
    acknowledged = {}
    lock = threading.Lock()
    stop = threading.Event()

    def uploader(n):
        k = n
        while not stop.is_set():
            body = images[k % len(images)]
            k += 1
            try:
                status, _, raw = daemon.request("POST", "/files", body, {"Content-Type": "image/png"})
            except OSError:
                return  # the daemon died under us
            if status == 201:
                with lock:
                    acknowledged[json.loads(raw)["_id"]] = hashlib.sha256(body).hexdigest()

    threads = [threading.Thread(target=uploader, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    # Kill while uploads stream, once some were acknowledged (a loaded machine takes longer).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(acknowledged) < 4:
        time.sleep(0.05)
    time.sleep(0.2)
    daemon.kill9()
    stop.set()
    for t in threads:
        t.join()
    assert acknowledged, "no upload finished before the kill"

    tmp_dir = daemon.data_dir / "files" / "tmp"
    leftovers = set(tmp_dir.iterdir())
    daemon.start()
    rows, objects = daemon.rows(), daemon.objects()
    # The start-up sweep removed what the kill left half-written; resumed
    # thumbnail jobs may already be writing new temp files, so compare names.
    assert not leftovers & set(tmp_dir.iterdir())
    assert set(rows) == set(objects), "every file has its row and every row its file"
    for file_id in objects:
        data = daemon.object_bytes(file_id)
        assert len(data) == rows[file_id]["size"]
        assert hashlib.sha256(data).hexdigest() == rows[file_id]["sha256"]
    for file_id, digest in acknowledged.items():
        status, _, data = daemon.request("GET", f"/files/{file_id}")
        assert status == 200 and hashlib.sha256(data).hexdigest() == digest
    # Jobs the kill cut short run again.
    metas = daemon.wait_for_thumbnails(list(rows))
    for m in metas:
        assert m["thumbnails"]["128"]["width"] == 128 or m["thumbnails"]["128"]["height"] == 128
    assert not list(tmp_dir.iterdir()), "finished jobs leave no temp files"


def test_restart_resumes_thumbnail_jobs(daemon):
    daemon.start()
    ids = daemon.upload_pngs(3, 600, 400, first_seed=3)
    daemon.wait_for_thumbnails(ids)
    daemon.stop()

    # Put the store back as a crash in the middle of the jobs leaves it:
    # jobs still queued, thumbnails pending, no thumbnail files.
    for file_id in ids:
        doc = json.loads(engine.sql(daemon.data_dir, "SELECT doc FROM _files WHERE id = ?", (file_id,))[0][0])
        for t in doc["thumbnails"].values():
            for k in ("width", "height", "size", "contentType"):
                t.pop(k, None)
            t["state"] = "pending"
        engine.sql(daemon.data_dir, "UPDATE _files SET doc = ? WHERE id = ?", (json.dumps(doc), file_id))
        engine.sql(daemon.data_dir, "INSERT INTO _file_jobs (file_id, content_type, created_at) VALUES (?, 'image/png', '2026-01-01T00:00:00.000Z')",
                   (file_id,))
    for file_id in ids:
        daemon.remove_thumbnails(file_id)

    daemon.start()
    metas = daemon.wait_for_thumbnails(ids)
    for m in metas:
        assert m["thumbnails"]["512"]["width"] == 512 and m["thumbnails"]["512"]["height"] == 341
        assert daemon.thumbnail_names(m["_id"]) == ["128.webp", "512.webp"]


def png_with_garbage_pixels(width, height):
    """A PNG whose chunks and CRCs are all valid but whose deflate data is noise:
    the container check passes, only decoding the pixels finds the damage."""
    noise = bytes((i * 131 + 7) & 0xFF for i in range(4000))
    return png_from_chunks(width, height, b"\x78\x9c" + noise)


def test_undecodable_pixels_fail_the_thumbnails_not_the_daemon(daemon):
    """Default `upload_validation: structure`: stored (201), the thumbnail worker
    marks each size failed with libvips' reason, the thumbnail endpoint answers
    422, and the original stays downloadable."""
    daemon.start()
    body = png_with_garbage_pixels(300, 200)
    status, _, raw = daemon.request("POST", "/files", body, {"Content-Type": "image/png"})
    assert status == 201, raw
    meta = json.loads(raw)
    assert (meta["width"], meta["height"]) == (300, 200)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        meta = json.loads(daemon.request("GET", f"/files/{meta['_id']}/meta")[2])
        if all(t["state"] != "pending" for t in meta["thumbnails"].values()) and not daemon.jobs():
            break
        time.sleep(0.1)
    assert [t["state"] for t in meta["thumbnails"].values()] == ["failed", "failed"], meta
    assert all(t["error"] for t in meta["thumbnails"].values())
    status, _, raw = daemon.request("GET", f"/files/{meta['_id']}/thumbnail?size=128")
    assert status == 422 and json.loads(raw)["error"] == "InvalidImage", raw
    assert daemon.request("GET", f"/files/{meta['_id']}")[::2] == (200, body)
    assert daemon.request("GET", "/healthz")[0] == 200


def test_decode_validation_refuses_undecodable_pixels_at_upload(daemon):
    """`upload_validation: decode` decodes every pixel before the 201."""
    daemon.config_path.write_text(daemon.base_config + "upload_validation: decode\n")
    daemon.start()
    status, _, raw = daemon.request("POST", "/files", png_with_garbage_pixels(300, 200), {"Content-Type": "image/png"})
    assert status == 422 and json.loads(raw)["error"] == "InvalidImage", raw
    assert daemon.rows() == {} and daemon.objects() == set()
    status, _, raw = daemon.request("POST", "/files", png(120, 80, 3), {"Content-Type": "image/png"})
    assert status == 201, raw


def test_on_demand_thumbnail_is_not_made_twice(daemon):
    """A configured size asked for before its job ran is made on demand (lane 0,
    ahead of the backlog); the job then records that file instead of making
    it again (same inode, or one version in the bucket)."""
    daemon.start()
    ids = daemon.upload_pngs(12, 900, 700, first_seed=5)
    last = ids[-1]
    status, _, body = daemon.request("GET", f"/files/{last}/thumbnail?size=512")
    assert status == 200 and body[:4] == b"RIFF"
    assert "512.webp" in daemon.thumbnail_names(last)
    mark = daemon.thumbnail_writes(last, "512.webp")
    metas = daemon.wait_for_thumbnails(ids)
    assert daemon.thumbnail_writes(last, "512.webp") == mark
    if daemon.s3:
        assert mark == 1
    meta = next(m for m in metas if m["_id"] == last)
    assert (meta["thumbnails"]["512"]["width"], meta["thumbnails"]["512"]["height"]) == (512, 398)


def _read_response(sock_file):
    """One HTTP/1.1 response (status, headers, body) with a Content-Length."""
    status = int(sock_file.readline().split()[1])
    headers = {}
    while (line := sock_file.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, sock_file.read(int(headers.get("content-length", "0")))


@pytest.mark.parametrize("size", [4095, 4096, 4097, 8192, 3 * 1024 * 1024 + 7])
def test_large_body_then_pipelined_request_are_read_exactly(daemon, size):
    """The loop reads past libevent's 4 KiB per read (CEventShim): the body must
    arrive whole and in order, and the bytes of a request sent right behind it
    on the same connection must stay for that request."""
    daemon.start()
    body = os.urandom(size)
    first = (f"POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
             f"Content-Length: {size}\r\n\r\n").encode() + body
    second = b"GET /files/none-such/meta HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as s:
        s.sendall(first + second)
        f = s.makefile("rb")
        status, _, raw = _read_response(f)
        assert status == 201, raw
        meta = json.loads(raw)
        assert meta["size"] == size and meta["sha256"] == hashlib.sha256(body).hexdigest()
        status, _, raw = _read_response(f)
        assert status == 404 and json.loads(raw)["error"] == "NotFound", raw
    status, _, stored = daemon.request("GET", f"/files/{meta['_id']}")
    assert status == 200 and stored == body
