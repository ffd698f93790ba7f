"""The reliability drills (this directory) at CI size (about 50 s in all):
3 kill -9 cycles, a backup-and-restore under load, the hostile corpus, the hostile bounds (small), a short slowloris (the short schemathesis run is
test_drills_schemathesis.py, in the parallel part). `make drills` runs the same code at full size and records the summary
lines in RELIABILITY.md.

The last tests pin bugs the drills found (see their docstrings)."""

import json
import socket
import urllib.parse

import pytest

from drills import crash, hostile, live, restore
from roost_harness import Roostd, one_request


def test_crash_drill_loses_nothing(tmp_path):
    result = crash.run(cycles=3, workdir=tmp_path, max_load=1.0, log=lambda *_: None)
    print(result["line"])
    assert result["failures"] == [], result["failures"][:10]
    assert result["lost"] == [], result["lost"][:10]
    assert result["acked"] > 0 and result["info"]["kills"] == 3


def test_live_drill_exactly_once_to_the_right_users(tmp_path):
    result = live.run(cycles=2, cycle_seconds=1.5, workdir=tmp_path, log=lambda *_: None)
    print(result["line"])
    assert result["failures"] == [], (result["failures"][:10], result["log_tail"])
    assert result["lost"] == [], result["lost"][:10]
    assert result["kills"] == 2 and result["expected"] > 500 and result["sessions"] > 30


def test_restore_drill_brings_back_everything_acknowledged_before_the_backup(tmp_path):
    result = restore.run(writers=2, warmup=1.5, after=0.5, workdir=tmp_path, log=lambda *_: None)
    print(result["line"])
    assert result["failures"] == [], (result["failures"][:10], result["log_tail"])
    assert result["lost"] == [], result["lost"][:10]
    info = result["info"]
    assert info["docs"] > 50 and info["uploads"] > 3 and info["files"] >= info["uploads"], info
    # The restore renews the feed's epoch: every cursor and stream from before is refused.
    assert info["cursors"] == {"refused": 4, "replayed": 0} and info["streams"] == {"reset": 2, "replayed": 0}, info


# The drills' daemon with the cheapest password hash (OWASP's 19 MiB Argon2id minimum, about a
# third of the default `interactive`'s time): schemathesis's coverage phase sends a few hundred
# password-bearing PATCH/PUT /users/{id} requests (each hashes, even for a missing user: the decoy
# hash), which at the default cost took most of its 3 minutes. Nothing here measures hashing.
HOSTILE_CONFIG = hostile.CONFIG + "password_cost: owasp\n"


@pytest.fixture()
def hostile_daemon(tmp_path):
    daemon = Roostd(tmp_path, HOSTILE_CONFIG)
    daemon.start()
    yield daemon
    daemon.close()


def test_hostile_corpus_gets_no_5xx_and_no_crash(hostile_daemon):
    result = hostile.run_corpus(hostile_daemon)
    print(result["line"])
    assert not result["crashed"], hostile_daemon.log_tail()
    assert result["leaks"] == []
    # The large-$in bug (test_large_in_list_is_not_a_server_error) is the one known 5xx.
    known = [e for e in result["server_errors"] if not e.startswith("params-query-60k")]
    assert known == []
    assert result["unexpected"] == []


def test_hostile_bounds_hold(hostile_daemon):
    """Issue #14's resource bounds, small: long paths, many keys, regex heap,
    NUL bytes, one-off thumbnail variants; issue #33's amplification (resolve,
    the change feed and batch answers); /healthz under 100 ms throughout."""
    result = hostile.run_bounds(hostile_daemon, keys=20_000, variants=40, log=lambda *_: None)
    print(result["line"])
    assert not result["crashed"], hostile_daemon.log_tail()
    assert result["failures"] == [], result["failures"][:10]
    assert result["stored_variants"] is not None and result["stored_variants"] <= 16
    assert {c["name"] for c in result["classes"]} == {"paths", "keys", "regex", "nul", "variants", "resolve", "feed", "live", "smuggle"}


def test_slowloris_keeps_healthz_answering(hostile_daemon):
    result = hostile.run_slowloris(hostile_daemon, connections=150, seconds=4)
    print(result["line"])
    assert result["failures"] == []
    assert result["probes"] > 20


# ---------------------------------------------------------------------------------------------
# Bugs found by the drills. Each test fails until roostd is fixed.

def test_large_in_list_is_not_a_server_error(hostile_daemon):
    """BUG (hostile corpus): `$in`/`$nin` with about 500 or more values, or `$or` with about
    1000 branches, on a collection that has a document, answers 500 InternalError:
    SQLite says "Expression tree is too large (maximum depth 1000)". Expected: 200 (or a
    400 naming the limit), never a 5xx."""
    port = hostile_daemon.port
    assert one_request(port, "POST", "/big", {"a": 1}).status == 201
    for query in ({"a": {"$in": list(range(1000))}}, {"a": {"$nin": ["x"] * 600}},
                  {"$or": [{"a": i} for i in range(1000)]}):
        for path in ("/big", "/big/_count"):
            r = one_request(port, "GET", f"{path}?query={urllib.parse.quote(json.dumps(query))}")
            assert r.status < 500, (path, str(query)[:40], r)


def _raw(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf


def test_trace_gets_a_json_405_not_libevents_501(hostile_daemon):
    """BUG (schemathesis, 16 operations): TRACE (and CONNECT) are not in evhttp's allowed
    methods, so libevent answers 501 with its own HTML page and no X-Request-Id, which
    schemathesis counts as a server error. Expected: the router's JSON 405 with Allow."""
    head = _raw(hostile_daemon.port, b"TRACE /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    status = head.split(b"\r\n", 1)[0]
    assert b" 405 " in status, head[:300]
    assert b"x-request-id:" in head.lower(), head[:300]


@pytest.mark.parametrize("method", ["HEAD", "TRACE"])
def test_a_head_or_trace_body_is_never_read_as_the_next_request(hostile_daemon, method):
    """BUG (schemathesis, unsupported_method): libevent 2.1 never reads the body of a
    HEAD or TRACE request, so on a kept-alive connection its bytes were parsed as the
    next request, which got libevent's HTML 400/501. Expected: the reply closes the
    connection, so the next request goes on a fresh one."""
    with socket.create_connection(("127.0.0.1", hostile_daemon.port), timeout=10) as s:
        s.sendall(f"{method} /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n".encode() + b'{"a": 1}')
        head = s.recv(65536)
        assert b"connection: close" in head.lower(), head[:300]
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        rest = b""
        try:
            while chunk := s.recv(65536):
                rest += chunk
        except OSError:
            pass
        assert b"<HTML>" not in rest and b"HTTP/1.1" not in rest, rest[:300]


@pytest.mark.xfail(strict=True, reason="libevent 2.1 refuses a body over evhttp's cap before any callback runs, "
                                        "with its own HTML 413 (2.1 has no server error callback); the status is right, the body is not JSON")
def test_body_over_the_upload_cap_gets_the_json_413(hostile_daemon):
    """BUG (hostile corpus): a body larger than max_upload_bytes + 64 KiB (on any route,
    e.g. POST /files or POST /<collection> with Content-Length: 30 MiB) is refused by
    evhttp's max body size with libevent's HTML 413 and no X-Request-Id, not the
    documented JSON `PayloadTooLarge`."""
    body = b"\x00" * (30 << 20)
    r = hostile._big_request(hostile_daemon.port, "POST", "/files", {"Content-Type": "application/octet-stream"}, body)
    assert r.status == 413
    assert "x-request-id" in r.headers, r.headers
    assert r.json()["error"] == "PayloadTooLarge"
