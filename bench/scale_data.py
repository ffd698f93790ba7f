"""bench/scale.py's data and HTTP: the documents (the same on both servers),
seeding through each server's batch API, and small GET helpers."""

import http.client
import json
import math
import random
import time
import urllib.parse

import benchlib as B


COLL = "items"
ADMIN_TOKEN = "scale-bench-admin-token-0123456789abcdef"
LNG0, LNG1 = 2.25, 2.42
LAT0, LAT1 = 48.815, 48.902
BOX_FRACTION = 0.03  # of the points inside a $geoWithin box
N_MAX = 3000


def entity(i):
    r = random.Random(i * 7919 + 17)
    return r.randint(0, N_MAX), round(r.uniform(LNG0, LNG1), 6), round(r.uniform(LAT0, LAT1), 6), "item %d" % i


def roost_doc(i):
    n, lng, lat, name = entity(i)
    return {"n": n, "loc": [lng, lat], "name": name}


def pb_doc(i):
    n, lng, lat, name = entity(i)
    return {"n": n, "lng": lng, "lat": lat, "name": name}


def q(obj):
    return urllib.parse.quote(json.dumps(obj, separators=(",", ":")))


def f(expr):
    return urllib.parse.quote(expr)


# ---------------------------------------------------------------- seeding
def post_json(holder, port, path, body, headers, tries=20):
    """POST on a kept-alive connection; reconnects on a reset and waits on 503 (queue full)."""
    data = json.dumps(body)
    for attempt in range(tries):
        c = holder.get("c") or B.conn(port, timeout=120)
        holder["c"] = c
        try:
            c.request("POST", path, data, headers)
            r = c.getresponse()
            payload = r.read()
        except (OSError, http.client.HTTPException):
            c.close()
            holder.pop("c", None)
            time.sleep(0.1 * (attempt + 1))
            continue
        if r.status == 503:
            time.sleep(0.2 * (attempt + 1))
            continue
        if r.status != 200:
            raise RuntimeError("POST %s: HTTP %d %s" % (path, r.status, payload[:300]))
        return json.loads(payload)
    raise RuntimeError("POST %s: gave up after %d tries" % (path, tries))


def seed_roost(port, start, end, ids, threads):
    def send(holder, rng):
        ops = [{"method": "POST", "path": "/" + COLL, "body": roost_doc(i)} for i in rng]
        res = post_json(holder, port, "/_batch", {"operations": ops}, {"Content-Type": "application/json"})
        for i, r in zip(rng, res["results"]):
            if r["status"] != 201:
                raise RuntimeError("roostd batch item %d: %s" % (i, r))
            ids[i] = r["body"]["_id"]
    return B.in_chunks(start, end, 100, threads, send)


def seed_pb(pb, start, end, ids, threads, per):
    url = "/api/collections/%s/records" % COLL
    hdr = {"Content-Type": "application/json", "Authorization": pb.token}

    def send(holder, rng):
        reqs = [{"method": "POST", "url": url, "body": pb_doc(i)} for i in rng]
        res = post_json(holder, pb.port, "/api/batch", {"requests": reqs}, hdr)
        for i, r in zip(rng, res):
            if r.get("status") != 200:
                raise RuntimeError("PocketBase batch item %d: %s" % (i, r))
            ids[i] = r["body"]["id"]
    return B.in_chunks(start, end, per, threads, send)


# ---------------------------------------------------------------- HTTP helpers
def get(port, path, headers=None, timeout=120):
    c = B.conn(port, timeout=timeout)
    t0 = time.monotonic()
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    ms = (time.monotonic() - t0) * 1000
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = body[:300].decode("utf-8", "replace")
    return r.status, data, hdrs, ms


def items_of(api, data):
    if api == "roost":
        return data if isinstance(data, list) else None
    return data.get("items") if isinstance(data, dict) else None


def n_of(api, d):
    return d.get("n")


def lnglat(api, d):
    if api == "roost":
        return d["loc"][0], d["loc"][1]
    return d["lng"], d["lat"]


def haversine_m(lng1, lat1, lng2, lat2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(min(1.0, a)))


# ---------------------------------------------------------------- shapes
RP = "/" + COLL
PP = "/api/collections/%s/records" % COLL
PB_TAIL = "&skipTotal=1"


def k(n):
    return "%dk" % (n // 1000) if n < 1000000 else "%gM" % (n / 1e6)
