"""Randomised differential test of roostd's MongoDB filter semantics.

Random documents are stored both in roostd (in an unindexed and an indexed
collection) and in mongomock, which serves as the reference; random filters
are then run against all three and the matching `_id` sets must be equal.

Filter shapes are kept inside what mongomock implements faithfully; every
shape left out for a mongomock shortcoming is named in EXCLUDED below, with
the reason.
"""

import json
import random

import pytest

from mongo_semantics_support import (
    INDEXED,
    N_DOCS,
    N_FILTERS,
    PLAIN,
    SEED,
    ids_from_roost,
    make_filter,
    seeded,
)


def test_random_filters_match_mongomock(roostd, seeded):
    _, docs, reference = seeded
    rng = random.Random(SEED + 1)
    failures = []
    nonempty = 0
    for i in range(N_FILTERS):
        flt = make_filter(rng)
        expected = {d["_id"] for d in reference.find(json.loads(json.dumps(flt)))}
        if 0 < len(expected) < N_DOCS:
            nonempty += 1
        for coll in (PLAIN, INDEXED):
            got, count = ids_from_roost(roostd, coll, flt)
            if got != expected or count != len(expected):
                failures.append(
                    f"#{i} {coll} filter={json.dumps(flt)}\n"
                    f"   only roostd: {sorted(got - expected)}  only mongomock: {sorted(expected - got)}"
                    f"  _count={count} expected={len(expected)}")
    assert not failures, f"{len(failures)} disagreements:\n" + "\n".join(failures[:40])
    # The generator must produce discriminating filters, not only all/none.
    assert nonempty > N_FILTERS // 3, nonempty


# Positional paths through an array of documents, where mongomock and MongoDB
# differ. MongoDB (jstests/core/null_query_semantics.js, pre-8.0 rules) walks
# both the element at the position and a field named "0" inside each element
# document; a document lacking that field counts as missing, so it matches
# null. mongomock only takes the position. Roost follows MongoDB, so these are
# pinned here without the mongomock reference and kept out of the random run.
POSITIONAL_PATH_CASES = [
    ({"objs": [{"x": 1}]}, {"objs.0.x": None}, True),
    ({"objs": [{"x": 1}]}, {"objs.0.x": {"$ne": None}}, False),
    ({"objs": [{"x": 1}]}, {"objs.0.x": {"$nin": [None, "cherry"]}}, False),
    ({"objs": [{"x": 1}]}, {"objs.0.x": 1}, True),
    ({"objs": [{"0": {"x": 2}}]}, {"objs.0.x": 2}, True),
    ({"objs": [{"z": [1]}]}, {"objs.0.z.0": {"$not": {"$eq": None}}}, False),
]


@pytest.mark.parametrize("doc,flt,should_match", POSITIONAL_PATH_CASES,
                         ids=[json.dumps(f) for _, f, _ in POSITIONAL_PATH_CASES])
def test_positional_path_through_documents(roostd, doc, flt, should_match):
    coll = "positional"
    roostd.request("DELETE", f"/{coll}/only")
    status, _, _ = roostd.json("POST", f"/{coll}", dict(doc, _id="only"))
    assert status == 201
    got, count = ids_from_roost(roostd, coll, flt)
    assert got == ({"only"} if should_match else set()) and count == len(got)
