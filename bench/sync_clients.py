"""bench/sync.py's clients: a client catching up over one keep-alive connection, page by page,
parsing every page, through roostd's `_deltaset`, a full refetch (keyset or skip paging), or
PocketBase's records list; each returns a Result, and `measured` adds the server's CPU and steal."""
import json
import os
import time
import urllib.parse

import benchlib as B

COLL = "items"


def get(c, path, headers=None):
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    if r.status != 200:
        raise SystemExit("GET %s: HTTP %d %s" % (path, r.status, body[:300]))
    head = sum(len(k) + len(v) + 4 for k, v in r.getheaders()) + 17
    return r, body, head


class Result:
    """One sync: wall seconds, pages, body and wire bytes, entities changed and deleted, the cursor."""

    def __init__(self):
        self.seconds = self.body = self.wire = self.pages = self.changed = self.deleted = 0
        self.cursor = None

    def add(self, body, head, changed, deleted=0):
        """Counts one page: its body, its headers' bytes, what it carried."""
        self.pages += 1
        self.body += len(body)
        self.wire += len(body) + head
        self.changed += changed
        self.deleted += deleted


def roost_delta(port, since, limit):
    c, res, cursor = B.conn(port), Result(), since
    t0 = time.perf_counter()
    while True:
        path = "/%s/_deltaset?limit=%d" % (COLL, limit) + ("&since=" + cursor if cursor else "")
        r, body, head = get(c, path)
        page = json.loads(body)
        res.add(body, head, len(page["changed"]), len(page["deleted"]))
        cursor = page["cursor"]
        if not page["more"]:
            break
    res.seconds = time.perf_counter() - t0
    res.cursor = cursor
    c.close()
    return res


def roost_full_keyset(port, limit):
    c, res, last = B.conn(port), Result(), None
    sort = B.q({"_id": 1})
    t0 = time.perf_counter()
    while True:
        path = "/%s?limit=%d&sort=%s" % (COLL, limit, sort) + ("&query=" + B.q({"_id": {"$gt": last}}) if last else "")
        r, body, head = get(c, path)
        page = json.loads(body)
        res.add(body, head, len(page))
        if len(page) < limit:
            break
        last = page[-1]["_id"]
    res.seconds = time.perf_counter() - t0
    c.close()
    return res


def roost_full_skip(port, limit):
    c, res, skip = B.conn(port), Result(), 0
    t0 = time.perf_counter()
    while True:
        r, body, head = get(c, "/%s?limit=%d&skip=%d" % (COLL, limit, skip))
        page = json.loads(body)
        res.add(body, head, len(page))
        if len(page) < limit:
            break
        skip += limit
    res.seconds = time.perf_counter() - t0
    c.close()
    return res


def pb_list(pb, filt, limit, keyset=False):
    c, res, last = B.conn(pb.port), Result(), None
    base = "/api/collections/%s/records?perPage=%d&skipTotal=1" % (COLL, limit)
    t0 = time.perf_counter()
    page_no = 1
    while True:
        f = filt
        if keyset:
            f = 'id>"%s"' % last if last else ""
            path = base + "&sort=id" + ("&filter=" + urllib.parse.quote(f) if f else "")
        else:
            path = base + "&page=%d&filter=%s" % (page_no, urllib.parse.quote(f))
        r, body, head = get(c, path)
        items = json.loads(body)["items"]
        res.add(body, head, len(items))
        if len(items) < limit:
            break
        last = items[-1]["id"]
        page_no += 1
    res.seconds = time.perf_counter() - t0
    c.close()
    return res


def measured(fn, pids, *args):
    before_steal = B.machine_ticks()
    before_cpu = {p: B.proc_cpu_ticks(p) for p in pids}
    res = fn(*args)
    res.steal = B.steal_since(before_steal)
    hz = os.sysconf("SC_CLK_TCK")
    res.server_cpu = sum(B.proc_cpu_ticks(p) - before_cpu[p] for p in pids) / hz
    return res
