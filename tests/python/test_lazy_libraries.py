"""libvips and libcurl are loaded when first needed, not at start-up: an idle
daemon has none of their libraries mapped; the first image upload maps
libvips and its thumbnails are made, the first webhook delivery maps libcurl.
When libvips cannot be loaded (the library named by ROOST_LIBVIPS is missing,
or is not libvips), image uploads answer a clear 503, the reason is logged
once at error level, and the daemon keeps serving everything else."""

import json
import pathlib
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from roost_harness import Roostd, png
from webhook_support import Receiver, config, user

CONFIG = "default_permission: public\nfiles_permission: public\nthumbnail_workers: 1\n"


def mapped(daemon, fragment):
    """The mapped files of the daemon whose path contains `fragment`."""
    maps = pathlib.Path(f"/proc/{daemon.proc.pid}/maps").read_text()
    return {line.split()[-1] for line in maps.splitlines() if fragment in line and "/" in line}


def upload(daemon, body, content_type):
    status, _, raw = daemon.request("POST", "/files", body, {"Content-Type": content_type}, timeout=30)
    return status, json.loads(raw)


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory(prefix="roost-vips-") as path:
        yield path


def test_libvips_is_mapped_only_once_an_image_arrives(tmp):
    daemon = Roostd(tmp, CONFIG).start()
    try:
        assert daemon.request("POST", "/notes", b'{"n":1}')[0] == 201
        assert not mapped(daemon, "libvips"), "libvips is mapped before any image"
        assert not mapped(daemon, "libglib"), "glib is mapped before any image"
        assert not mapped(daemon, "libpq"), "libpq is mapped on SQLite (it loads at the first PostgreSQL connection)"
        status, meta = upload(daemon, b"plain text, no image", "text/plain")
        assert status == 201, meta
        assert not mapped(daemon, "libvips"), "a non-image upload loaded libvips"

        status, meta = upload(daemon, png(300, 200, 7), "image/png")
        assert status == 201, meta
        assert mapped(daemon, "libvips.so.42"), "the image upload did not load libvips"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            meta = json.loads(daemon.request("GET", f"/files/{meta['_id']}/meta")[2])
            if all(t["state"] != "pending" for t in meta["thumbnails"].values()):
                break
            time.sleep(0.2)
        assert all(t["state"] == "ready" for t in meta["thumbnails"].values()), meta
        status, headers, body = daemon.request("GET", f"/files/{meta['_id']}/thumbnail?w=50&h=50&fit=cover")
        assert status == 200 and body[:4] == b"RIFF", (status, body[:40])
    finally:
        daemon.stop()
    assert "libvips cannot be loaded" not in daemon.log_text()


def test_first_images_arriving_together_load_libvips_once(tmp):
    """Several upload workers reach the one-time load at once (pthread_once)."""
    daemon = Roostd(tmp, CONFIG + "upload_validation: decode\n").start()
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda seed: upload(daemon, png(120, 90, seed), "image/png"), range(8)))
        assert [status for status, _ in results] == [201] * 8, results
        assert all(meta["width"] == 120 and meta["height"] == 90 for _, meta in results)
        assert len(mapped(daemon, "libvips.so.42")) == 1
        assert daemon.request("GET", "/healthz")[0] == 200
    finally:
        daemon.stop()


@pytest.mark.parametrize("library, reason", [
    ("libvips-not-installed.so.42", "could not be loaded"),
    # A real library that is not libvips: loaded, but lacks its functions.
    ("libz.so.1", "has no vips_version"),
])
def test_without_libvips_image_uploads_answer_503_and_the_rest_keeps_working(tmp, library, reason):
    daemon = Roostd(tmp, CONFIG, env={"ROOST_LIBVIPS": library}).start()
    try:
        assert "libvips" not in daemon.log_text(), "start-up mentioned libvips"
        for seed in (1, 2):
            status, body = upload(daemon, png(64, 48, seed), "image/png")
            assert status == 503, body
            assert body["error"] == "ImageProcessingUnavailable", body
            assert library in body["description"] and reason in body["description"], body
        # Everything else still works: other files, documents, health.
        status, meta = upload(daemon, b"%PDF-1.4 not an image", "application/octet-stream")
        assert status == 201, meta
        status, _, raw = daemon.request("GET", f"/files/{meta['_id']}")
        assert status == 200 and raw == b"%PDF-1.4 not an image"
        assert daemon.request("POST", "/notes", b'{"n":2}')[0] == 201
        assert daemon.request("GET", "/healthz")[0] == 200
        assert daemon.proc.poll() is None
    finally:
        daemon.stop()
    log = daemon.log_text()
    errors = [line for line in log.splitlines() if "libvips cannot be loaded" in line]
    assert len(errors) == 1, log
    assert library in errors[0] and "error" in errors[0].lower(), errors[0]


def test_libcurl_is_mapped_only_once_a_webhook_is_delivered(tmp):
    receiver = Receiver().start()
    roost = Roostd(tmp, config(receiver.url)).start()
    try:
        alice, alice_token = user(roost, "alice")
        bob, _ = user(roost, "bob")
        assert not mapped(roost, "libcurl"), "libcurl is mapped before any delivery"
        assert not mapped(roost, "libgnutls"), "libcurl's TLS library is mapped before any delivery"
        r = roost.call("POST", "/messages", {"recipientId": bob, "text": "hello"}, alice_token)
        assert r.status == 201, r
        assert receiver.wait_for(lambda r: len(r.accepted()) == 1), roost.log_text()
        assert mapped(roost, "libcurl.so.4"), "the delivery did not load libcurl"
    finally:
        roost.stop()
        receiver.stop()
