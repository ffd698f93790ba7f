"""The load of the restore drill (restore.py): writer threads creating and
updating documents whose content derives from id and version, an uploader
posting PNGs, and the ledger of what each client was told and when."""

import hashlib
import threading
import time

from roost_harness import Client

COLLECTION = "drill"


def content(doc_id, version):
    digest = hashlib.sha256(f"{doc_id}:{version}".encode()).hexdigest()
    return {"_id": doc_id, "v": version, "digest": digest, "pad": digest * 4}


class Ledger:
    """What the clients were told: per document the (answered_at, version)
    of every acknowledged write and the highest version sent; per upload
    (answered_at, sha256)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acks = {}        # id -> [(t, version)]
        self.sent = {}        # id -> highest version sent
        self.files = {}       # id -> (t, sha256)
        self.tried = 0
        self.server_errors = []

    def acked_before(self, instant):
        with self.lock:
            docs = {i: max(v for t, v in a if t < instant) for i, a in self.acks.items() if any(t < instant for t, _ in a)}
            files = {i: sha for i, (t, sha) in self.files.items() if t < instant}
        return docs, files


def writer(port, ledger, stop, w, rng):
    client, mine, n = Client(port, timeout=30), [], 0
    try:
        while not stop.is_set():
            n += 1
            if rng.random() < 0.6 or not mine:
                doc_id, version, method, path = f"w{w}n{n}", 0, "POST", f"/{COLLECTION}"
            else:
                doc_id = rng.choice(mine)
                version, method, path = ledger.sent[doc_id] + 1, "PUT", f"/{COLLECTION}/{doc_id}"
            with ledger.lock:
                ledger.sent[doc_id] = version
                ledger.tried += 1
            reply = client.request(method, path, content(doc_id, version))
            if reply.status in (200, 201):
                with ledger.lock:
                    ledger.acks.setdefault(doc_id, []).append((time.monotonic(), version))
                if version == 0:
                    mine.append(doc_id)
            elif reply.status >= 500 and reply.status != 503:
                with ledger.lock:
                    ledger.server_errors.append(f"{method} {path} -> {reply.status} {reply.raw[:120]!r}")
    except OSError:
        pass
    finally:
        client.close()


def uploader(port, ledger, stop, images):
    client, k = Client(port, timeout=30), 0
    try:
        while not stop.is_set():
            image = images[k % len(images)]
            k += 1
            reply = client.request("POST", "/files", image, {"Content-Type": "image/png"})
            if reply.status == 201:
                with ledger.lock:
                    ledger.files[reply.json()["_id"]] = (time.monotonic(), hashlib.sha256(image).hexdigest())
            elif reply.status >= 500 and reply.status != 503:
                with ledger.lock:
                    ledger.server_errors.append(f"POST /files -> {reply.status} {reply.raw[:120]!r}")
            stop.wait(0.05)
    except OSError:
        pass
    finally:
        client.close()
