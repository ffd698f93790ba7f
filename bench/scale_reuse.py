"""bench/scale.py --reuse: both servers started on the data a previous run left,
and the ids rebuilt from it."""

import json
import os
import urllib.parse

import benchlib as B
from scale_data import PP, RP, f, get


# ---------------------------------------------------------------- kept data (--reuse)
def start_roostd_keep(binary, port, workdir):
    """roostd on the data and config a previous run left in workdir (benchlib's start wipes them)."""
    data = os.path.join(workdir, "roost-data")
    cfg = os.path.join(workdir, "roost.yaml")
    p = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--data-dir", data, "--config", cfg],
                os.path.join(workdir, "roostd-%d.log" % port))
    B.wait_http(port, "/healthz", p, "roostd", limit=300)
    return p


class PBKeep(B.PB):
    """PocketBase on the pb_data a previous run left in workdir (benchlib's PB wipes it)."""
    def __init__(self, port, workdir):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        data = os.path.join(workdir, "pb_data")
        self.proc = B.spawn([B.pb_binary(), "serve", "--http", "127.0.0.1:%d" % port, "--dir", data],
                            os.path.join(workdir, "pocketbase.log"), cwd=workdir)
        B.wait_http(port, "/api/health", self.proc, "PocketBase", limit=120)
        self.token = ""
        self.token = self.api("POST", "/api/collections/_superusers/auth-with-password",
                              {"identity": B.PB_EMAIL, "password": B.PB_PASSWORD})["token"]


def rebuild_ids(port, pb, workdir):
    """Writes roost-ids.txt and pb-ids.txt (line i: the id of document "item i") by walking both
    collections, for kept data from a run that did not write them."""
    by = {}
    after = None
    c = B.conn(port)
    while True:
        c.request("GET", RP + "?limit=1000&fields=name" + ("&after=" + urllib.parse.quote(after) if after else ""))
        r = c.getresponse()
        page = json.loads(r.read())
        for d in page:
            by[int(d["name"].split()[1])] = d["_id"]
        after = r.getheader("X-Roost-Next")
        if not after or not page:
            break
    ids = [by[i] for i in range(len(by))]
    with open(os.path.join(workdir, "roost-ids.txt"), "w") as fh:
        fh.write("\n".join(ids) + "\n")
    if pb:
        by, last = {}, ""
        while True:
            st, data, _, _ = get(pb.port, PP + "?perPage=1000&skipTotal=1&fields=id,name&sort=id&filter=" + f('id>"%s"' % last))
            items = data["items"]
            for d in items:
                by[int(d["name"].split()[1])] = d["id"]
            if len(items) < 1000:
                break
            last = items[-1]["id"]
        with open(os.path.join(workdir, "pb-ids.txt"), "w") as fh:
            fh.write("\n".join(by[i] for i in range(len(by))) + "\n")
    B.log("rebuilt the id files from the kept data: %d documents" % len(ids))
