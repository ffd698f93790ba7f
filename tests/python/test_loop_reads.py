"""A GET by id answered on the event loop itself (`loop_reads`, SQLite, issue #43)
answers exactly what a reader answers: every caller × document × case, status and
body, compared with the same data served with `loop_reads: false`. The loop really
serves them (roost_loop_reads_total), `?resolve=` still goes to a reader, and a
write held open elsewhere never delays a read on the loop."""

import time

import pytest

from roost_harness import FAST_HASHING, Roostd, engine

pytestmark = pytest.mark.skipif(engine.name() != "sqlite", reason="loop reads are SQLite's (PostgreSQL reads go to readers)")

CONFIG = FAST_HASHING + """rate_limits: off
collections:
  notes:
    permission: private
  pages:
    permission: public
  posts:
    permission: shared
"""


def metric(node, outcome):
    text = node.call("GET", "/metrics").raw.decode()
    for line in text.splitlines():
        if line.startswith('roost_loop_reads_total{outcome="%s"}' % outcome):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def seed(node):
    """Two users' documents in a private, a public and a shared collection: (callers, paths)."""
    alice, alice_token = node.new_user("alice")
    _, bob_token = node.new_user("bob")
    paths = []
    for collection in ("notes", "pages", "posts"):
        for token in (alice_token, bob_token):
            r = node.api(token).request("POST", "/" + collection, {"text": "by %s" % token[:6], "n": len(paths),
                                                                     "nested": {"a": [1, 2, {"b": None}]}})
            assert r.status == 201, r
            paths.append("/%s/%s" % (collection, r.json()["_id"]))
        paths.append("/%s/000000000000000000000000" % collection)   # absent
    paths += ["/pages/not-an-id", "/nowhere/000000000000000000000000"]
    callers = {"anonymous": None, "alice": alice_token, "bob": bob_token, "bad token": "not-a-token"}
    return callers, paths


def answers(node, callers, paths):
    """{(caller, path, conditional): (status, body)} for every caller, path, with and without If-None-Match."""
    out = {}
    for name, token in callers.items():
        client = node.api(token)
        for path in paths:
            r = client.request("GET", path)
            out[(name, path, False)] = (r.status, r.raw)
            etag = r.header("etag")
            if etag:
                again = client.request("GET", path, headers={"If-None-Match": etag})
                out[(name, path, True)] = (again.status, again.raw)
    return out


def test_the_loop_answers_exactly_what_a_reader_answers(tmp_path):
    node = Roostd(tmp_path / "n", CONFIG).start()
    try:
        callers, paths = seed(node)
        before = metric(node, "served")
        on_loop = answers(node, callers, paths)
        served = metric(node, "served") - before
    finally:
        assert node.stop() == 0
    # Most of those GETs ran on the loops (the database is small and in memory).
    assert served >= len(on_loop) * 0.8, (served, len(on_loop))
    assert {s for s, _ in on_loop.values()} >= {200, 401, 404}, sorted({s for s, _ in on_loop.values()})

    off = Roostd(tmp_path / "off", CONFIG + "loop_reads: false\n", data_dir=node.data_dir).start()
    try:
        on_readers = answers(off, callers, paths)
        assert metric(off, "served") == 0
    finally:
        off.stop()
    assert on_loop.keys() == on_readers.keys()
    differ = [k for k in on_loop if on_loop[k] != on_readers[k]]
    assert not differ, [(k, on_loop[k], on_readers[k]) for k in differ[:5]]


def test_resolving_references_goes_to_a_reader(tmp_path):
    node = Roostd(tmp_path / "n", CONFIG).start()
    try:
        _, token = node.new_user("carol")
        api = node.api(token)
        r = api.request("POST", "/pages", {"title": "t"})
        assert r.status == 201
        path = "/pages/" + r.json()["_id"]
        assert api.request("GET", path).status == 200
        served = metric(node, "served")
        r = api.request("GET", path + "?resolve=title")
        assert r.status == 200, r
        assert metric(node, "served") == served
        assert api.request("GET", path).status == 200
        assert metric(node, "served") == served + 1
    finally:
        node.stop()


def test_a_write_held_open_elsewhere_never_delays_a_read_on_the_loop(tmp_path):
    """Another process holds a write transaction open (an operator's sqlite3 shell):
    GETs by id on the loop keep answering at once and see the last committed state."""
    import sqlite3
    import time
    node = Roostd(tmp_path / "n", CONFIG + "loops: 1\n").start()
    try:
        r = node.api().request("POST", "/pages", {"title": "t"})
        path = "/pages/" + r.json()["_id"]
        other = sqlite3.connect(str(node.data_dir / "roost.db"), timeout=0, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            api, served = node.api(), metric(node, "served")
            for _ in range(50):
                t = time.monotonic()
                got = api.request("GET", path)
                assert got.status == 200 and got.json()["title"] == "t", got
                assert time.monotonic() - t < 0.5
            assert metric(node, "served") >= served + 50
        finally:
            other.execute("ROLLBACK")
            other.close()
    finally:
        node.stop()


DROP_CACHES = "/proc/sys/vm/drop_caches"


def drop_from_page_cache():
    """Writes back and drops the kernel's clean page cache (root only): the database's
    pages with it. (posix_fadvise's DONTNEED leaves the pages of a file roostd has open.)"""
    import os
    os.sync()
    with open(DROP_CACHES, "w") as f:
        f.write("1\n")


@pytest.mark.skipif(not __import__("os").access(DROP_CACHES, __import__("os").W_OK),
                    reason="dropping the page cache needs root (/proc/sys/vm/drop_caches)")
def test_a_page_not_in_memory_is_read_by_a_reader_never_waited_for_on_the_loop(tmp_path):
    """With the database's pages dropped from the page cache, a GET by id on the loop
    would wait for the disk: it is handed to a reader (which answers 200 and brings the
    pages in), and the next GET of it is served on the loop. (No connection maps the file,
    so that the kernel drops its pages: a mapped page stays.)"""
    node = Roostd(tmp_path / "n", CONFIG + "loops: 1\nsqlite_mmap_bytes: 0\n").start()
    try:
        api = node.api()
        ids = []
        for start in range(0, 3000, 100):
            ops = [{"method": "POST", "path": "/pages", "body": {"n": i, "pad": "x" * 200}} for i in range(start, start + 100)]
            r = api.request("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
            ids += [x["body"]["_id"] for x in r.json()["results"]]
        # The loop's connection is open (its first read) and holds a few pages of its own.
        assert api.request("GET", "/pages/" + ids[0]).status == 200
        handed_on, tries = metric(node, "handed_on"), 0
        while tries < 8:
            time.sleep(0.6)   # past the checkpointer's next pass, which dirties the pages it copies
            drop_from_page_cache()
            got = api.request("GET", "/pages/" + ids[-1 - tries * 37])   # at once: nothing read the file since
            assert got.status == 200 and got.json()["n"] == 2999 - tries * 37, got
            tries += 1
            if metric(node, "handed_on") > handed_on:
                break
        assert metric(node, "handed_on") > handed_on, "no read found a page missing from memory"
        served = metric(node, "served")
        again = api.request("GET", "/pages/" + ids[-1 - (tries - 1) * 37])
        assert again.status == 200
        assert metric(node, "served") == served + 1
    finally:
        node.stop()
