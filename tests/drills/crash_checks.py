"""The crash drill's load and its checks: the ledger of acknowledged writes, the
load threads, and the verification after each kill and at the end."""

import hashlib
import pathlib
import sqlite3
import threading
import time
import urllib.parse

from roost_harness import Client, engine, png

from .common import list_all


COLLECTION = "drill"
WORKERS = 4


def content(doc_id, version):
    """The document a client stores for (id, version); checked byte for byte."""
    digest = hashlib.sha256(f"{doc_id}:{version}".encode()).hexdigest()
    return {"_id": doc_id, "v": version, "digest": digest, "tags": [digest[:6], version],
            "nested": {"a": {"b": [version, digest[-8:]]}}}


def same_content(stored, expected):
    return all(stored.get(k) == v for k, v in expected.items())


class Ledger:
    """What the clients know. For a document: the last acknowledged version
    (None: its create was never acknowledged) and the version in flight at
    the kill (None: none). For files: the acknowledged id → (sha256, bytes)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.docs = {}           # id -> [acked_version or None, pending_version or None]
        self.absent = set()      # creates refused with an answer: must not exist
        self.files = {}          # id -> (sha256, bytes)
        self.images_pending_check = set()
        self.counts = {"create": [0, 0], "update": [0, 0], "upload": [0, 0], "refused": 0}
        self.server_errors = []

    def tried(self, kind):
        with self.lock:
            self.counts.setdefault(kind, [0, 0])[0] += 1

    def acked(self, kind):
        with self.lock:
            self.counts.setdefault(kind, [0, 0])[1] += 1


def _load(port, ledger, hooks, rng, worker, cycle, stop):
    client = Client(port, timeout=15)
    mine = [i for i, (acked, pending) in ledger.docs.items() if i.endswith(f"w{worker}") and acked is not None]
    n = 0
    try:
        while not stop.is_set():
            n += 1
            kind = None
            for hook in hooks:
                if rng.random() < 0.2:
                    kind = hook.write(client, rng, worker)
                    if kind:
                        break
            if kind:
                continue
            r = rng.random()
            if r < 0.4 or not mine:
                doc_id = f"c{cycle}n{n}w{worker}"
                with ledger.lock:
                    ledger.docs[doc_id] = [None, 0]
                ledger.tried("create")
                reply = client.request("POST", f"/{COLLECTION}", content(doc_id, 0))
                with ledger.lock:
                    if reply.status == 201:
                        ledger.docs[doc_id] = [0, None]
                        ledger.counts["create"][1] += 1
                        mine.append(doc_id)
                    else:
                        del ledger.docs[doc_id]
                        ledger.absent.add(doc_id)
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"POST /{COLLECTION} -> {reply.status} {reply.raw[:120]!r}")
            elif r < 0.75:
                doc_id = rng.choice(mine)
                with ledger.lock:
                    version = ledger.docs[doc_id][0] + 1
                    ledger.docs[doc_id][1] = version
                ledger.tried("update")
                reply = client.request("PUT", f"/{COLLECTION}/{urllib.parse.quote(doc_id)}", content(doc_id, version))
                with ledger.lock:
                    ledger.docs[doc_id][1] = None
                    if reply.status == 200:
                        ledger.docs[doc_id][0] = version
                        ledger.counts["update"][1] += 1
                    else:
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"PUT -> {reply.status} {reply.raw[:120]!r}")
            else:
                image = png(rng.randint(4, 24), rng.randint(4, 24), rng.randint(1, 10**6))
                ledger.tried("upload")
                reply = client.request("POST", "/files", image, {"Content-Type": "image/png"})
                if reply.status == 201:
                    meta = reply.json()
                    with ledger.lock:
                        ledger.files[meta["_id"]] = (hashlib.sha256(image).hexdigest(), image)
                        ledger.counts["upload"][1] += 1
                else:
                    with ledger.lock:
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"POST /files -> {reply.status} {reply.raw[:120]!r}")
    except (OSError, ValueError, KeyError) as e:  # killed under us (http.client raises OSError subclasses)
        _ = e
    finally:
        client.close()


def _all_docs(port):
    return {d["_id"]: d for d in list_all(port, COLLECTION)}


def _verify(daemon, ledger, verify_bytes_of, failures, lost):
    """Checks the documents (all) and the files in `verify_bytes_of`; resolves
    writes whose outcome was unknown at the kill. Returns how many it checked."""
    checked = 0
    docs = _all_docs(daemon.port)
    with ledger.lock:
        for doc_id, (acked, pending) in list(ledger.docs.items()):
            checked += 1
            stored = docs.get(doc_id)
            if stored is None:
                if acked is not None:
                    lost.append(f"document {doc_id} (acknowledged version {acked}) is missing")
                    del ledger.docs[doc_id]
                else:
                    del ledger.docs[doc_id]  # create never acknowledged and did not land: fine
                continue
            candidates = [v for v in (acked, pending) if v is not None]
            match = next((v for v in candidates if same_content(stored, content(doc_id, v))), None)
            if match is None:
                if acked is not None and isinstance(stored.get("v"), int) and stored["v"] < acked:
                    lost.append(f"document {doc_id}: acknowledged version {acked}, found {stored.get('v')}")
                else:
                    failures.append(f"document {doc_id}: content matches none of versions {candidates}: {stored}")
                ledger.docs[doc_id] = [stored.get("v") if isinstance(stored.get("v"), int) else acked, None]
            else:
                ledger.docs[doc_id] = [match, None]
        for doc_id in ledger.absent:
            checked += 1
            if doc_id in docs:
                failures.append(f"document {doc_id} was refused with an answer but exists")
        ledger.absent.clear()
        files = [(fid, ledger.files[fid]) for fid in verify_bytes_of if fid in ledger.files]
    client = Client(daemon.port, timeout=30)
    try:
        for fid, (sha, image) in files:
            checked += 1
            reply = client.request("GET", f"/files/{fid}")
            if reply.status != 200:
                lost.append(f"file {fid} answered {reply.status}")
            elif hashlib.sha256(reply.raw).hexdigest() != sha:
                lost.append(f"file {fid}: bytes differ from the upload")
            meta = client.request("GET", f"/files/{fid}/meta")
            if meta.status != 200 or meta.json().get("sha256") != sha or meta.json().get("size") != len(image):
                failures.append(f"file {fid}: metadata {meta.status} {meta.raw[:200]!r}")
    finally:
        client.close()
    return checked


def object_path(data_dir, fid):
    return pathlib.Path(data_dir) / "files" / "objects" / fid[-2:] / fid


def disk_state(data_dir):
    """Stopped daemon only: integrity_check (SQLite), rows of `_files`, files on disk."""
    data_dir = pathlib.Path(data_dir)
    if engine.name() == "sqlite":
        db = sqlite3.connect(str(data_dir / "roost.db"), timeout=5)
        try:
            integrity = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
            rows = {r[0] for r in db.execute("SELECT id FROM _files").fetchall()}
        finally:
            db.close()
    else:  # PostgreSQL checks its own pages; what counts here is the rows
        integrity = ["ok"]
        rows = {r[0] for r in engine.sql(data_dir, "SELECT id FROM _files")}
    objects = data_dir / "files" / "objects"
    on_disk = {p.name for p in objects.glob("*/*") if p.is_file()} if objects.exists() else set()
    misplaced = [str(p) for p in objects.glob("*/*")
                 if p.is_file() and p != object_path(data_dir, p.name)] if objects.exists() else []
    tmp = data_dir / "files" / "tmp"
    temporaries = [p.name for p in tmp.iterdir()] if tmp.exists() else []
    return {"integrity": integrity, "rows": rows, "files": on_disk, "misplaced": misplaced, "tmp": temporaries}


def _wait_thumbnails(daemon, ids, timeout):
    """Every image's configured thumbnails become ready (jobs resume after kills)."""
    deadline = time.monotonic() + timeout
    waiting = set(ids)
    client = Client(daemon.port, timeout=15)
    try:
        while waiting and time.monotonic() < deadline:
            for fid in sorted(waiting):
                reply = client.request("GET", f"/files/{fid}/meta")
                thumbs = (reply.json() or {}).get("thumbnails", {}) if reply.status == 200 else {}
                if thumbs and all(t.get("state") in ("ready", "failed") for t in thumbs.values()):
                    waiting.discard(fid)
            if waiting:
                time.sleep(0.5)
    finally:
        client.close()
    return waiting
