"""The query-plan tests' world: 1,200 random documents in roostd and a Python
reference that filters and orders them."""

import json
import random

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, json_query as q, running_roostd


CONFIG = f"""
default_permission: public
admin_token: {ADMIN_TOKEN}
{FAST_HASHING}
collections:
  items:
    indexes: [n, m, g, "loc:geo"]
  notes:
    permission: private
    indexes: [n]
"""

DOCS = 1200
SEED = 2211


def random_value(rng, arrays):
    """Every type the order knows, with many ties."""
    kind = rng.choice(["int", "int", "int", "float", "str", "str", "null", "missing", "bool", "obj"] + (["arr"] * 2 if arrays else []))
    return {
        "int": lambda: rng.randint(-20, 20),
        "float": lambda: rng.randint(-400, 400) / 8,
        "str": lambda: rng.choice(["", "a", "ab", "b", "B", "zz", "é", "10"]),
        "null": lambda: None,
        "missing": lambda: KeyError,
        "bool": lambda: rng.random() < 0.5,
        "obj": lambda: {"a": rng.randint(0, 3)},
        "arr": lambda: [rng.randint(-20, 20) for _ in range(rng.randint(0, 3))],
    }[kind]()


def bracket_and_value(doc, field):
    """Roost's sort key of one field: type bracket, then the value in it."""
    if field not in doc or doc[field] is None:
        return (1, 0)
    v = doc[field]
    if isinstance(v, bool):
        return (6, int(v))
    if isinstance(v, (int, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, v.encode())
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return (4 if isinstance(v, dict) else 5, text.encode())


def reference_order(docs, sort):
    """`docs` (in insertion order) sorted as Roost documents it."""
    indexed = list(enumerate(docs))
    keys = sort or []
    rid_ascending = keys[0][1] == 1 if keys else True
    # Stable sorts from the last key to the first.
    indexed.sort(key=lambda p: p[0], reverse=not rid_ascending)
    for field, direction in reversed(keys):
        if field in ("_id", "_createdAt", "_updatedAt"):
            indexed.sort(key=lambda p: p[1][field], reverse=direction == -1)
        else:
            indexed.sort(key=lambda p: bracket_and_value(p[1], field), reverse=direction == -1)
    return [d["_id"] for _, d in indexed]


def value_matches(v, op, bound):
    """MongoDB's comparison: only values of the bound's type bracket compare."""
    if isinstance(bound, (int, float)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return False
        a, b = v, bound
    else:
        if not isinstance(v, str):
            return False
        a, b = v.encode(), bound.encode()
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(doc, flt):
    for field, cond in flt.items():
        v = doc.get(field)
        candidates = [v] + (v if isinstance(v, list) else [])
        if isinstance(cond, dict):
            if not all(any(value_matches(c, op, bound) for c in candidates) for op, bound in cond.items()):
                return False
        elif cond not in candidates:
            return False
    return True


@pytest.fixture(scope="module")
def world():
    rng = random.Random(SEED)
    with running_roostd(CONFIG) as d:
        docs = []
        for start in range(0, DOCS, 100):
            ops = []
            for i in range(start, min(DOCS, start + 100)):
                doc = {"i": i, "g": rng.choice("abcde"), "s": rng.randint(0, 50)}
                if rng.random() < 0.9:
                    doc["loc"] = [rng.uniform(-10, 10), rng.uniform(40, 50)]
                for field, arrays in (("n", False), ("m", True)):
                    v = random_value(rng, arrays)
                    if v is not KeyError:
                        doc[field] = v
                ops.append({"method": "POST", "path": "/items", "body": doc})
            r = d.call("POST", "/_batch", {"operations": ops})
            assert r.status == 200, r
            docs += [json.loads(res["body"]) if isinstance(res["body"], str) else res["body"] for res in r.body["results"]]
        assert len(docs) == DOCS and all("_id" in x for x in docs)
        yield d, docs


def get_ids(d, path, token=None):
    r = d.call("GET", path, token=token)
    assert r.status == 200, (path, r)
    return [x["_id"] for x in r.body], r.header("X-Roost-Next")
