"""Random documents and filters for the Mongo-semantics tests, and how to ask
roostd for the ids a filter matches."""

import json
import os
import random
import urllib.parse

import mongomock
import pytest


SEED = int(os.environ.get("ROOST_FUZZ_SEED", "20240611"))
N_DOCS = 200
N_FILTERS = 300

PLAIN = "docsPlain"
INDEXED = "docsIndexed"  # value indexes configured in conftest.CONFIG_YAML

# Scalars drawn for documents and for filter arguments alike, so that
# equality and ranges actually hit. Numbers and numeric strings are mixed on
# purpose: MongoDB never matches 1 against "1".
NUMBERS = [0, 1, 2, 3, 10, -1, 2.5, 1.0, 0.5]
STRINGS = ["apple", "Apple", "banana", "cherry", "", "1", "2", "10", "2.5", "grape fruit"]
BOOLS = [True, False]

EXCLUDED = """
Shapes deliberately not generated, because mongomock (4.3) disagrees with the
MongoDB manual there (each was checked against roostd, which follows the manual):

1. Negative conditions (null equality incl. $in:[null], $ne, $nin, $not,
   $exists:false) on a dotted path that can dead-end: a scalar or null parent
   ({"a": 5} with {"a.x": null}), an array index past the end
   ({"objs": [{..}]} with {"objs.1.y": {"$ne": 1}}), or an empty array
   ({"objs": []} with {"objs.0.x": {"$not": {"$gt": 0.5}}}). The manual: a
   missing field equals null and satisfies $ne/$nin/$not/$exists:false;
   mongomock's iter_key_candidates returns no candidate at all there and so
   rejects the document. Such paths (UNSAFE_PATHS) get positive conditions
   only; the documents are shaped so the other dotted paths never dead-end.
2. $exists:false on a path through an array of documents where only some
   elements have the field ({"objs": [{"y": 0}, {}]} with {"objs.y":
   {"$exists": false}}): MongoDB says the field exists (no match); mongomock
   checks each element separately and matches. We use the equivalent
   {"$not": {"$exists": true}} there instead, which mongomock gets right.
3. Several operators in one operator object on a path through an array of
   documents ({"objs.x": {"$gte": 1, "$nin": [null]}} with x values "10",
   2.5; {"objs.x": {"$lt": "10", "$in": [null]}}): MongoDB applies each
   operator to the candidate values on its own; mongomock requires a single
   candidate to satisfy the whole object. Negative operators are also kept
   alone elsewhere, for the same reason.
4. $size on scalars or objects: mongomock's _size_op counts a truthy scalar as
   size 1 and an object by its number of keys; MongoDB matches arrays only.
   $size 1 is only asked of paths that are never scalars or objects.
5. Booleans against numbers: Python's True == 1 makes mongomock match
   {"a": 1} with {"a": true} (and $gt etc. across the bool/number brackets);
   BSON keeps them apart. Booleans are used as arguments only on `flag`,
   which holds only booleans and null, and never as comparison bounds.
7. $options inside $not: mongomock raises "unknown operator: $options".
8. null inside $all ({"name": {"$all": [null]}} on a document without name):
   the manual defines $all as the $and of equalities, and {"name": null}
   matches a missing field; mongomock never matches a missing field.
6. $all on a path crossing an array of documents: mongomock crashes
   (TypeError flattening its NOTHING sentinel).
"""


def scalar(rng, kinds="nsbz"):
    """A random scalar: n=number, s=string, b=bool, z=null."""
    k = rng.choice(kinds)
    if k == "n":
        return rng.choice(NUMBERS)
    if k == "s":
        return rng.choice(STRINGS)
    if k == "b":
        return rng.choice(BOOLS)
    return None


def make_doc(rng, i):
    d = {"_id": f"d{i:03d}"}

    def maybe(p):
        return rng.random() < p

    # a: scalar, array of scalars, null, small object, or missing
    r = rng.random()
    if r < 0.45:
        d["a"] = scalar(rng, "nnssz")
    elif r < 0.65:
        d["a"] = [scalar(rng, "nns") for _ in range(rng.randint(0, 3))]
    elif r < 0.75:
        d["a"] = {"x": scalar(rng, "ns")}
    elif r < 0.8:
        d["a"] = None
    # b: nested object
    if maybe(0.8):
        b = {}
        if maybe(0.8):
            b["c"] = scalar(rng, "nns") if maybe(0.7) else [scalar(rng, "ns") for _ in range(rng.randint(0, 3))]
        if maybe(0.7):
            b["d"] = scalar(rng, "nssz")
        if maybe(0.2):
            b["e"] = {"f": scalar(rng, "ns")}
        d["b"] = b  # always a document when present: b.* paths never dead-end
    # arr: array of scalars (sometimes a bare scalar)
    if maybe(0.8):
        d["arr"] = [scalar(rng, "nnss") for _ in range(rng.randint(0, 4))]
    elif maybe(0.5):
        d["arr"] = scalar(rng, "ns")
    # objs: a non-empty array of documents (so objs.x and objs.0.x never dead-end)
    if maybe(0.75):
        objs = []
        for _ in range(rng.randint(1, 3)):
            o = {}
            if maybe(0.85):
                o["x"] = scalar(rng, "nnsz")
            if maybe(0.7):
                o["y"] = scalar(rng, "ns")
            if maybe(0.25):
                o["z"] = [scalar(rng, "n") for _ in range(rng.randint(1, 3))]
            objs.append(o)
        d["objs"] = objs
    if maybe(0.85):
        d["name"] = rng.choice(STRINGS + ["Central Park", "central station", "Museum of Art"])
    if maybe(0.8):
        d["n"] = scalar(rng, "nnns")
    if maybe(0.7):
        d["flag"] = rng.choice([True, False, None])
    return d


# Paths the filters use. SAFE_PATHS never dead-end in the generated documents
# (see EXCLUDED 1); UNSAFE_PATHS can, so they only get positive conditions.
SAFE_PATHS = ["a", "b", "arr", "objs", "name", "n", "missing", "b.c", "b.d", "b.e.f",
              "objs.x", "objs.y", "objs.z", "objs.0.x", "objs.0.z.0"]
UNSAFE_PATHS = ["a.x", "a.0", "b.c.0", "arr.0", "arr.1", "objs.1.y"]
# Paths crossing an array of documents (EXCLUDED 2 and 6).
THROUGH_DOC_ARRAYS = {"objs.x", "objs.y", "objs.z", "objs.0.x", "objs.0.z.0"}
ALL_PATHS = ["a", "b.c", "arr", "b.d", "name", "n"]
SIZE1_PATHS = ["objs", "objs.z"]
NEGATIVE_OPS = {"$ne", "$nin", "$not"}
# Positional paths through an array of documents: null and negative conditions
# there follow MongoDB, not mongomock (see POSITIONAL_PATH_CASES).
POSITIONAL_THROUGH_DOCS = {"objs.0.x", "objs.0.z.0"}


def value_arg(rng, safe=True):
    # Booleans only on `flag` (EXCLUDED 5); null only where safe (EXCLUDED 1).
    return scalar(rng, "nnnsssz" if safe else "nnnsss")


def cmp_arg(rng):
    return scalar(rng, "nns")


REGEXES = [("^a", None), ("an", None), ("^APP", "i"), ("e$", None), ("^[0-9]+$", None),
           ("park", "i"), ("^$", None), ("r.*t", "i"), ("^c.n", None)]


def field_condition(rng, path, depth, safe=True):
    """A condition for one field: implicit equality or an operator object."""
    if rng.random() < 0.12:
        return value_arg(rng, safe)
    ops = {}
    for _ in range(1 if rng.random() < 0.75 else 2):
        op = rng.choice(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin",
                         "$exists", "$not", "$all", "$size", "$elemMatch", "$regex"])
        if not safe and op in NEGATIVE_OPS:
            continue
        if op in ("$eq", "$ne"):
            ops[op] = value_arg(rng, safe)
        elif op in ("$gt", "$gte", "$lt", "$lte"):
            ops[op] = cmp_arg(rng)
        elif op in ("$in", "$nin"):
            ops[op] = [value_arg(rng, safe) for _ in range(rng.randint(0, 3))]
        elif op == "$exists":
            want = rng.choice([True, False]) if safe else True
            if not want and path in THROUGH_DOC_ARRAYS:
                ops["$not"] = {"$exists": True}
            else:
                ops[op] = want
        elif op == "$not":
            if depth > 2:
                continue
            inner = field_condition(rng, path, depth + 1, safe)
            if not isinstance(inner, dict) or "$not" in inner:
                inner = {"$gt": cmp_arg(rng)}
            # mongomock rejects $options inside $not ("unknown operator"),
            # which MongoDB accepts; keep only option-free patterns there.
            if "$options" in inner:
                inner = {"$regex": "^c.n"}
            ops[op] = inner
        elif op == "$all":
            if path not in ALL_PATHS:
                continue
            ops[op] = [value_arg(rng, False) for _ in range(rng.randint(1, 2))]  # EXCLUDED 8
        elif op == "$size":
            if path in SIZE1_PATHS:
                ops[op] = rng.randint(0, 3)
            elif path in ("arr", "b.c"):
                ops[op] = rng.choice([0, 2, 3])
            else:
                continue
        elif op == "$elemMatch":
            if rng.random() < 0.5:
                # operator form: conditions on each scalar element
                em = {}
                for _ in range(rng.randint(1, 2)):
                    o = rng.choice(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne", "$in"])
                    em[o] = [cmp_arg(rng), cmp_arg(rng)] if o == "$in" else cmp_arg(rng)
                ops[op] = em
            else:
                # document form: conditions on fields of document elements
                sub = {}
                for f in rng.sample(["x", "y", "z"], rng.randint(1, 2)):
                    sub[f] = field_condition(rng, f, depth + 2) if rng.random() < 0.6 else value_arg(rng)
                ops[op] = sub
        elif op == "$regex":
            pat, opts = rng.choice(REGEXES)
            ops["$regex"] = pat
            if opts:
                ops["$options"] = opts
    if len(ops) > 1 and path in THROUGH_DOC_ARRAYS:
        ops = dict([next(iter(ops.items()))])  # EXCLUDED 3
    if len(ops) > 1 and NEGATIVE_OPS & set(ops):
        # EXCLUDED 3: keep the negative operator alone.
        ops = {k: v for k, v in ops.items() if k in NEGATIVE_OPS}
        ops = dict([next(iter(ops.items()))])
    if not ops:
        ops["$exists"] = True
    return ops


def make_filter(rng, depth=0):
    r = rng.random()
    if depth < 2 and r < 0.2:
        op = rng.choice(["$and", "$or", "$nor"])
        return {op: [make_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    f = {}
    for _ in range(rng.randint(1, 2)):
        rr = rng.random()
        if rr < 0.06:
            f["flag"] = rng.choice([True, False, None, {"$ne": True}, {"$in": [False, None]},
                                    {"$eq": False}, {"$exists": False}])
        elif rr < 0.09:
            f["_id"] = rng.choice([f"d{rng.randrange(N_DOCS):03d}", {"$in": [f"d{rng.randrange(N_DOCS):03d}", "nope"]},
                                   {"$gt": "d150"}])
        else:
            safe = rng.random() < 0.75
            path = rng.choice(SAFE_PATHS if safe else UNSAFE_PATHS)
            f[path] = field_condition(rng, path, depth, safe and path not in POSITIONAL_THROUGH_DOCS)
    return f


def strict_quote(text):
    return urllib.parse.quote(text, safe="")


def ids_from_roost(roost, collection, flt):
    q = strict_quote(json.dumps(flt, separators=(",", ":")))
    status, _, body = roost.json("GET", f"/{collection}?query={q}&limit=1000")
    assert status == 200, f"{collection} {flt}: HTTP {status} {body}"
    status, _, count = roost.json("GET", f"/{collection}/_count?query={q}")
    assert status == 200, f"{collection} {flt} _count: HTTP {status} {count}"
    ids = {d["_id"] for d in body}
    return ids, count["count"]


@pytest.fixture(scope="module")
def seeded(roostd):
    rng = random.Random(SEED)
    docs = [make_doc(rng, i) for i in range(N_DOCS)]
    reference = mongomock.MongoClient().db.docs
    for d in docs:
        reference.insert_one(json.loads(json.dumps(d)))
        for coll in (PLAIN, INDEXED):
            status, _, body = roostd.json("POST", f"/{coll}", d)
            assert status == 201, (coll, d, status, body)
    return rng, docs, reference
