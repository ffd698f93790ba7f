"""The checks of the restore drill (restore.py) on the restored daemon:
documents, files by the backup's MANIFEST, change-feed cursors and live
streams from before the restore. Each appends to `failures` (or `lost`)
and returns what it counted."""

import hashlib
import random
import re
import time
import urllib.parse

from roost_harness import Client, one_request

from .common import list_all
from .feed import sync
from .live import LiveStream, live_path


def check_documents(port, coll, docs, ledger, content, failures, lost):
    """Every write acknowledged before the backup, with its content; nothing
    nobody wrote. Returns the restored collection {id: doc}."""
    stored = {d["_id"]: d for d in list_all(port, coll)}
    for doc_id, version in sorted(docs.items()):
        doc = stored.get(doc_id)
        if doc is None:
            lost.append(f"{doc_id}: acknowledged (version {version}) before the backup began, missing after the restore")
        elif doc.get("v", -1) < version:
            lost.append(f"{doc_id}: restored at version {doc.get('v')}, version {version} was acknowledged before the backup")
    for doc_id, doc in sorted(stored.items()):
        sent = ledger.sent.get(doc_id)
        if sent is None:
            failures.append(f"{doc_id}: restored, but nobody wrote it")
        elif not 0 <= doc.get("v", -1) <= sent:
            failures.append(f"{doc_id}: restored at version {doc.get('v')}, never written (highest sent {sent})")
        elif any(doc.get(k) != v for k, v in content(doc_id, doc["v"]).items()):
            failures.append(f"{doc_id}: restored content is not version {doc['v']}'s")
    return stored


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _thumbnail(client, file_id, query):
    """GET a thumbnail, waiting (bounded) while it is being made."""
    for _ in range(50):
        reply = client.request("GET", f"/files/{file_id}/thumbnail?{query}")
        if reply.status not in (202, 503):
            return reply
        time.sleep(0.2)
    return reply


def check_files(daemon, manifest, uploads, failures, lost):
    """Every MANIFEST file on the restored disk with its SHA-256 and served by
    GET; every upload acknowledged before the backup served, with a
    thumbnail. Returns how many manifest files were checked."""
    client, checked = Client(daemon.port, timeout=60), 0
    try:
        for line in manifest.read_text().splitlines():
            if not line.startswith("f "):
                continue
            _, size, sha, path = line.split(" ", 3)
            on_disk = daemon.data_dir / path
            if not on_disk.exists() or _sha(on_disk.read_bytes()) != sha:
                failures.append(f"{path}: not restored with its manifest SHA-256")
            parts = path.split("/")
            if parts[:2] == ["files", "objects"]:
                reply = client.request("GET", f"/files/{parts[-1]}")
                if reply.status != 200 or _sha(reply.raw) != sha:
                    failures.append(f"GET /files/{parts[-1]}: {reply.status}, not the manifest's bytes")
            elif parts[:2] == ["files", "thumbs"]:
                m = re.match(r"(\d+)\.", parts[-1])
                reply = _thumbnail(client, parts[-2], f"size={m.group(1)}" if m else "size=128")
                if reply.status != 200 or (m and _sha(reply.raw) != sha):
                    failures.append(f"GET thumbnail {path}: {reply.status}, not the manifest's bytes")
            checked += 1
        for file_id, sha in sorted(uploads.items()):
            reply = client.request("GET", f"/files/{file_id}")
            if reply.status != 200 or _sha(reply.raw) != sha:
                lost.append(f"upload {file_id} acknowledged before the backup: GET answered {reply.status} without its bytes")
                continue
            reply = _thumbnail(client, file_id, "size=128")
            if reply.status != 200 or not reply.raw or not reply.headers.get("content-type", "").startswith("image/"):
                failures.append(f"upload {file_id}: its thumbnail answered {reply.status}")
    finally:
        client.close()
    return checked


def _replay(client, coll, cursor, copy):
    """Pages `_deltaset` from `cursor` into `copy`: (status, error name)."""
    for _ in range(10000):
        q = urllib.parse.urlencode({"since": cursor, "limit": 500})
        reply = client.request("GET", f"/{coll}/_deltaset?{q}")
        if reply.status != 200:
            body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
            return reply.status, (body or {}).get("error")
        page = reply.json()
        for d in page["changed"]:
            copy[d["_id"]] = d
        for d in page["deleted"]:
            copy.pop(d["_id"], None)
        cursor = page["cursor"]
        if not page["more"]:
            return 200, None
    return 200, "more=true for 10000 pages"


def check_cursors(port, cursors, coll, failures):
    """Each cursor from before the restore: 410 CursorExpired, or a replay
    that lands exactly on the restored data. Then a fresh sync works."""
    counts = {"refused": 0, "replayed": 0}
    client = Client(port, timeout=60)
    try:
        stored = {d["_id"]: d for d in list_all(port, coll)}
        _, listing, _, _ = sync(port, "files", None, random.Random(0))   # GET /files lists nothing
        files = set(listing)
        for when, by_coll in sorted(cursors.items()):
            for name, (cursor, copy) in sorted(by_coll.items()):
                copy = dict(copy)
                status, error = _replay(client, name, cursor, copy)
                if status == 410 and error == "CursorExpired":
                    counts["refused"] += 1
                elif status != 200 or error:
                    failures.append(f"cursor {when} the backup ({name}): {status} {error}, not 410 CursorExpired")
                elif (set(copy) != files) if name == "files" else (copy != stored):
                    failures.append(f"cursor {when} the backup ({name}) was accepted and replayed into a copy that is "
                                    f"not the restored data ({len(copy)} vs {len(files if name == 'files' else stored)}): "
                                    f"silently wrong")
                else:
                    counts["replayed"] += 1
        cursor, _, _, _ = sync(port, coll, None, random.Random(1))
        reply = client.request("PUT", f"/{coll}/after-restore", {"after": "restore"})
        _, changed, deleted, _ = sync(port, coll, cursor, random.Random(2))
        if reply.status != 201 or set(changed) != {"after-restore"} or deleted:
            failures.append(f"a cursor taken after the restore: write {reply.status}, delta {sorted(changed)[:5]}")
    finally:
        client.close()
    return counts


def apply_events(copy, events):
    for e in events:
        if e.kind in ("create", "update", "enter"):
            copy[e.entity_id] = e.entity
        elif e.kind in ("delete", "leave"):
            copy.pop(e.entity_id, None)


def check_streams(port, lives, coll, streams, failures):
    """Each live stream resumed with a Last-Event-ID from before the restore:
    `event: reset`, or a replay that lands exactly on the restored data;
    then a new write arrives live."""
    counts = {"reset": 0, "replayed": 0}
    for when, (last_id, copy) in sorted(lives.items()):
        if last_id is None:
            failures.append(f"the live stream had no event {when} the backup")
            continue
        stream = LiveStream(port, live_path(coll), last_event_id=last_id, timeout=30)
        streams.append(stream)
        if stream.status != 200 or not stream.wait_ready():
            failures.append(f"resuming the stream {when} the backup: {stream.status}")
            continue
        stream.wait_events(1, timeout=3)
        events = stream.snapshot()
        if events and events[0].kind == "reset":
            counts["reset"] += 1
        else:
            while stream.wait(lambda s, n=len(events): len(s.events) > n, timeout=1.0):
                events = stream.snapshot()
            copy = dict(copy)
            apply_events(copy, events)
            now = {d["_id"]: d for d in list_all(port, coll)}
            if copy != now:
                failures.append(f"the stream resumed from {when} the backup got no reset and replayed {len(events)} "
                                f"events into a copy that is not the restored collection: silently wrong")
                continue
            counts["replayed"] += 1
        sentinel = f"live-{when}"
        reply = one_request(port, "PUT", f"/{coll}/{sentinel}", {"live": when})
        if reply.status != 201 or not stream.wait(lambda s: any(e.entity_id == sentinel for e in s.events), timeout=10):
            failures.append(f"the stream resumed from {when} the backup did not get the new write {sentinel} live")
        stream.close()
    return counts
