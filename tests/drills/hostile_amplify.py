"""The hostile drill's amplification classes (issue #33): one small request
must not make the daemon hold, store or send a multiple of what it changed.

- resolve: a document holding many references to one large target, and
  many documents full of references, read with `?resolve=` (bounded per
  response: at most 8 MiB added, 10,000 expansions, 1000 targets read);
- feed: batches of one-field PATCHes to a large document (the change feed
  keeps a reverse patch, not the whole document; the answer carries the
  entity once);
- live: idle streams that never read while a large document changes many
  times (each stream holds at most `live_buffer_bytes`; the RSS watch of
  the bounds drill checks the daemon);
- smuggle: a second request hidden in the body of a request with two
  `Content-Length` headers must never run.
Each returns its requests through the bounds drill's `_Tally`."""

import json
import random
import socket
import urllib.parse

from roost_harness import engine, random_letters, rss_kib

from .live_paths import live_path
from .live_stream import LiveStream

from .hostile_corpus_cases import COLLECTION

MiB = 1 << 20


def _blob(n, seed):
    rng = random.Random(seed)
    return random_letters(rng, n)


def _ref(_id):
    return {"_type": "ref", "_collection": COLLECTION, "_id": _id}


def bound_resolve(t):
    c = COLLECTION
    big = t.send("seed-target", "POST", f"/{c}", {"blob": _blob(900_000, 1)}, allowed={201})
    if big is None or big.status != 201:
        return
    target = big.json()["_id"]
    for copies in (150, 2000):
        r = t.send(f"holder-{copies}", "POST", f"/{c}", {"refs": [_ref(target)] * copies}, allowed={201})
        if r is None or r.status != 201:
            continue
        holder = r.json()["_id"]
        got = t.send(f"resolve-{copies}", "GET", f"/{c}/{holder}?resolve=refs", allowed={200})
        if got is not None and len(got.raw) > 10 * MiB:
            t.failures.append(f"{t.name} resolve-{copies}: answered {len(got.raw) >> 20} MiB (at most 8 MiB added)")
    for i in range(8):
        t.send(f"dense-{i}", "POST", f"/{c}", {"dense": "yes", "refs": [_ref(target)] * 4000}, allowed={201})
    q = urllib.parse.quote(json.dumps({"dense": "yes"}))
    got = t.send("resolve-list", "GET", f"/{c}?resolve=refs&limit=50&query={q}", allowed={200})
    if got is not None and len(got.raw) > 10 * MiB + 8 * 300_000:
        t.failures.append(f"{t.name} resolve-list: answered {len(got.raw) >> 20} MiB")


def bound_feed(t):
    c = COLLECTION
    size = 200_000
    r = t.send("seed-doc", "POST", f"/{c}", {"blob": _blob(size, 2), "n": 0}, allowed={201})
    if r is None or r.status != 201:
        return
    doc = r.json()["_id"]
    before = _feed_bytes(t.daemon)
    for round_ in range(2):
        ops = [{"method": "PATCH", "path": f"/{c}/{doc}", "body": {"n": round_ * 100 + i}} for i in range(50)]
        got = t.send(f"batch-{round_}", "POST", "/_batch", {"operations": ops}, allowed={200})
        if got is not None and got.status == 200 and len(got.raw) > 2 * size:
            t.failures.append(f"{t.name} batch-{round_}: answered {len(got.raw)} bytes for one {size}-byte document")
    grown = _feed_bytes(t.daemon) - before
    if grown > 100 * 2000:
        t.failures.append(f"{t.name}: the change feed grew {grown} bytes for 100 one-field updates (whole copies: {100 * size})")


def _feed_bytes(daemon):
    return int(engine.sql(daemon.data_dir, "SELECT coalesce(sum(length(prev_doc)), 0) FROM _changes")[0][0])


def bound_live(t, streams=12, changes=40, size=300_000):
    c = COLLECTION
    idle = []
    rss_before = rss_kib(t.daemon.proc.pid)
    try:
        for _ in range(streams):
            s = LiveStream(t.daemon.port, live_path(c), read=False, rcvbuf=4096)
            t.requests += 1
            if s.status != 200:
                t.failures.append(f"{t.name} open: {s.status}")
                s.close()
                continue
            idle.append(s)
        r = t.send("seed-doc", "POST", f"/{c}", {"blob": _blob(size, 3), "n": 0}, allowed={201})
        if r is None or r.status != 201:
            return
        doc = r.json()["_id"]
        for k in range(0, changes, 20):
            ops = [{"method": "PATCH", "path": f"/{c}/{doc}", "body": {"n": k + i}} for i in range(20)]
            t.send(f"batch-{k}", "POST", "/_batch", {"operations": ops}, allowed={200})
        # Each idle stream may hold live_buffer_bytes (1 MiB); whole copies would be streams × changes × size.
        grown_mib = (rss_kib(t.daemon.proc.pid) - rss_before) / 1024
        if grown_mib > streams + 64:
            t.failures.append(f"{t.name}: RSS grew {grown_mib:.0f} MiB with {streams} idle streams (bound {streams + 64} MiB)")
    finally:
        for s in idle:
            s.close()


def bound_smuggle(t):
    c = COLLECTION
    hidden = f"PUT /{c}/smuggled HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
    heads = [
        f"POST /{c} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: {2 + len(hidden)}\r\n\r\n{{}}",
        f"POST /{c} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {2 + len(hidden)}\r\nContent-Length: 2\r\n\r\n{{}}",
        f"POST /{c} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{{}}",
        f"POST /{c} HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: 2\n\n{{}}",
    ]
    for i, head in enumerate(heads):
        t.requests += 1
        with socket.create_connection(("127.0.0.1", t.daemon.port), timeout=10) as sock:
            sock.sendall(head.encode() + hidden.encode())
            answer = b""
            try:
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            except OSError:
                pass
        if not answer.startswith(b"HTTP/1.1 400"):
            t.failures.append(f"{t.name} head-{i}: answered {answer[:60]!r}, not 400")
        if answer.count(b"HTTP/1.1 ") > 1:
            t.failures.append(f"{t.name} head-{i}: more than one answer on the connection")
    t.send("smuggled-absent", "GET", f"/{c}/smuggled", allowed={404})
