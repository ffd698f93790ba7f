"""The seed iOS client's exact requests (geo boxes, category lists) give the
same answers as mongomock."""

import json
import random
import urllib.parse

import mongomock
import pytest

from mongo_semantics_support import SEED


# --- The seed iOS client's exact requests -----------------------------------

def cf_escape(text):
    """What CFURLCreateStringByAddingPercentEscapes(NULL, s, NULL, NULL, UTF-8)
    produces: it escapes only characters not legal in an RFC 2396 URL (space,
    " # % < > [ \\ ] ^ ` { | }, controls and non-ASCII) and leaves the reserved
    set !$&'()*+,-./:;=?@_~ as it is, so `$`, `:` and `,` reach the server raw."""
    return urllib.parse.quote(text, safe="!$&'()*+,-./:;=?@_~")


CATEGORIES = ["Park", "Museum", "Cafe", "Library", "Zoo"]


@pytest.fixture(scope="module")
def locations(roostd):
    rng = random.Random(SEED + 2)
    docs = []
    for i in range(60):
        d = {
            "_id": f"loc{i:02d}",
            "name": f"Place {i}",
            "placename": rng.choice(["Berlin", "London", "Paris"]),
            "details": "A place worth a visit.",
            "imageId": f"img{i:03d}",
            "categories": rng.sample(CATEGORIES, rng.randint(0, 2)),
        }
        if i % 10 != 9:  # a few places without a location
            # three decimals, never on the box edges used below
            d["location"] = [round(rng.uniform(-10, 20), 3) + 0.0005, round(rng.uniform(40, 60), 3) + 0.0005]
        docs.append(d)
    for coll in ("locations", "locationsPlain"):
        for d in docs:
            status, _, body = roostd.json("POST", f"/{coll}", d)
            assert status == 201, (coll, status, body)
    return docs


BOXES = [((-5, 45), (5, 55)), ((0, 40), (20, 60)), ((10.25, 50.5), (12.75, 52.125)), ((-10, 40), (-9, 41))]


@pytest.mark.parametrize("coll", ["locations", "locationsPlain"])
@pytest.mark.parametrize("box", BOXES)
def test_seed_client_geo_box(roostd, locations, coll, box):
    (x0, y0), (x1, y1) = box
    # The client formats the filter with string interpolation, compact.
    text = '{"location":{"$geoWithin":{"$box":[[%s,%s],[%s,%s]]}}}' % (x0, y0, x1, y1)
    path = f"/{coll}?query={cf_escape(text)}&limit=1000"
    assert "$geoWithin" in path and "%7B%22location%22" in path  # as the device sends it
    status, _, body = roostd.json("GET", path)
    assert status == 200, body
    # mongomock does not implement $geoWithin; $box is planar and inclusive,
    # and no generated point lies on an edge, so a plain range check is exact.
    expected = {d["_id"] for d in locations if "location" in d
                and x0 <= d["location"][0] <= x1 and y0 <= d["location"][1] <= y1}
    assert {d["_id"] for d in body} == expected
    status, _, count = roostd.json("GET", f"/{coll}/_count?query={cf_escape(text)}")
    assert status == 200 and count["count"] == len(expected)


@pytest.mark.parametrize("coll", ["locations", "locationsPlain"])
@pytest.mark.parametrize("text", [
    '{"categories":{"$in":["Park","Museum"]}}',
    '{"categories": {"$in": ["Park", "Museum"]}}',  # pretty-printed: spaces become %20
])
def test_seed_client_categories_in(roostd, locations, coll, text):
    reference = mongomock.MongoClient().db.locations
    reference.insert_many([dict(d) for d in locations])
    expected = {d["_id"] for d in reference.find(json.loads(text))}
    assert expected and len(expected) < len(locations)
    status, _, body = roostd.json("GET", f"/{coll}?query={cf_escape(text)}&limit=1000")
    assert status == 200, body
    assert {d["_id"] for d in body} == expected
    status, _, count = roostd.json("GET", f"/{coll}/_count?query={cf_escape(text)}")
    assert status == 200 and count["count"] == len(expected)
