"""Hostile and malformed input: every reply is a JSON error with a fitting
status, nothing crashes or hangs, and stored data stays intact."""

import json
import random
import socket
import urllib.parse

ERROR_STATUSES = {400, 404, 405, 409, 413, 415, 503}


def raw_exchange(base, payload, timeout=10):
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(payload)
        chunks = []
        while True:
            try:
                data = s.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


def random_json_text(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return str(rng.randint(-10, 10))
    if kind == 1:
        return json.dumps(rng.choice(["a", "", "$x", "é", "\u0000", "😀"]))
    if kind == 2:
        return rng.choice(["true", "false", "null"])
    if kind == 3:
        return rng.choice(["1e400", "-0", "0.5", "[", "{", "}", "\"", ":", ","])
    if kind == 4:
        return rng.choice(["$where", "$gt", "$in", "$regex", "$elemMatch", "$nearSphere", "$box", "$not"])
    if kind in (5, 6):
        keys = [rng.choice(["a", "a.b", "$and", "$or", "$gt", "$in", "$regex", "$options", "$size",
                            "$elemMatch", "$geoWithin", "$box", "$not", "$exists", "b.0", "", "$"])
                for _ in range(rng.randint(0, 3))]
        return "{" + ",".join(json.dumps(k) + ":" + random_json_text(rng, depth + 1) for k in keys) + "}"
    return "[" + ",".join(random_json_text(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"


def test_random_filters_never_break_the_daemon(roostd):
    status, _, stored = roostd.json("POST", "/hostile", {"name": "keep me", "n": 1, "tags": ["a"]})
    assert status == 201
    rng = random.Random(99)
    for _ in range(400):
        text = random_json_text(rng)
        path = "/hostile?query=" + urllib.parse.quote(text)
        status, headers, body = roostd.request("GET", path)
        assert status in {200} | ERROR_STATUSES, (text, status, body)
        parsed = json.loads(body)
        if status == 200:
            assert isinstance(parsed, list)
        else:
            assert set(parsed) == {"error", "description"}, (text, parsed)
    status, _, again = roostd.json("GET", "/hostile/" + stored["_id"])
    assert status == 200 and again == stored


def test_random_bodies_are_refused_cleanly(roostd):
    rng = random.Random(7)
    before = roostd.json("GET", "/hostileBodies/_count")[2]["count"]
    created = 0
    for _ in range(200):
        text = random_json_text(rng)
        status, _, body = roostd.request("POST", "/hostileBodies", raw_body=text.encode("utf-8", "surrogatepass"),
                                         headers={"Content-Type": "application/json"})
        assert status in {201} | ERROR_STATUSES, (text, status, body)
        if status == 201:
            created += 1
        else:
            assert set(json.loads(body)) == {"error", "description"}
    assert roostd.json("GET", "/hostileBodies/_count")[2]["count"] == before + created


def test_garbage_on_the_wire_leaves_the_daemon_serving(roostd):
    payloads = [
        b"\x00\xff\xfe garbage\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Long: " + b"a" * 100_000 + b"\r\n\r\n",
        b"POST /hostile HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n{}",
        b"POST /hostile HTTP/1.1\r\nContent-Length: 5\r\n\r\n{",
        b"GET /%ff%fe%00/%2e%2e HTTP/1.1\r\nHost: x\r\n\r\n",
        b"BREW /coffee HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /hostile?query=%7B%22a%22%3A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ]
    for p in payloads:
        raw_exchange(roostd.base, p, timeout=2)
    status, _, body = roostd.json("GET", "/healthz")
    assert status == 200 and body == {"status": "ok"}


def test_catastrophic_regex_does_not_hang(roostd):
    for i in range(50):
        roostd.json("POST", "/redos", {"s": "a" * 30 + str(i)})
    flt = json.dumps({"s": {"$regex": "^(a|aa)+$"}})
    status, _, body = roostd.request("GET", "/redos?query=" + urllib.parse.quote(flt))
    assert status in (200, 400, 503), body
    if status != 200:
        assert set(json.loads(body)) == {"error", "description"}
    assert roostd.json("GET", "/healthz")[0] == 200
