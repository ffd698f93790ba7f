"""Access matrix: one roostd with a collection per permission level, four
principals (anonymous, user A, user B, admin), and every collection endpoint.

Each (level, principal, endpoint) asserts the status and exactly which row ids
come back or are counted. The expectations are written out as tables below,
straight from the access rules:

* public   — anyone reads and writes; anonymous rows have creator null.
* shared   — signed-in users read everything; create by any signed-in user;
             update/delete by the creator or users in _acl.write (others 403).
* private  — only the creator and users in _acl.read/_acl.write see a row
             (others: excluded from list/count, 404 on get/put/patch/delete);
             writes by the creator and _acl.write.
* readonly — signed-in users read; only the admin writes (users 403).
* anonymous on a non-public collection: 401. Admin: everything.

This file: reads and writes. test_access_matrix_acl.py: _acl rules and bad tokens.
"""

import uuid

import pytest

from roost_harness import assert_error
from access_matrix_support import (
    BOX_QUERY,
    COLLECTION,
    CREATE,
    IN_BOX,
    LEVELS,
    MATRIX,
    MATRIX_IDS,
    ROWS,
    SEEDED,
    TAG_QUERY,
    VISIBLE,
    expected_rows,
    in_box,
    list_ids,
    q,
    tagged_x,
    update_status,
    world,
)


# ---------------------------------------------------------------------------
# Reads: list, list with a query, list with a $box filter, _count, get.

@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("variant", ["all", "query", "box", "box+query"])
def test_list(world, level, principal, variant):
    preds = {
        "all": (lambda row: True, None),
        "query": (tagged_x, TAG_QUERY),
        "box": (in_box, BOX_QUERY),
        "box+query": (lambda row: in_box(row) and tagged_x(row), {"$and": [BOX_QUERY, TAG_QUERY]}),
    }
    pred, query = preds[variant]
    extra = f"&query={q(query)}" if query else ""
    expected = expected_rows(level, principal, pred)
    expected = expected if expected == 401 else world.in_wire_order(level, expected)
    r, ids = list_ids(world, principal, level, extra + "&count=true")
    if expected == 401:
        assert_error(r, 401, "Unauthorized")
        return
    assert r.status == 200, r
    assert ids == expected
    assert r.header("X-Total-Count") == str(len(expected))
    # Paging walks the same visible rows, nothing else.
    paged = []
    for skip in range(0, len(expected) + 2, 2):
        _, page = list_ids(world, principal, level, extra + f"&skip={skip}", limit=2)
        paged += page
    assert paged == expected


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("variant", ["all", "query", "box"])
def test_count(world, level, principal, variant):
    pred, query = {"all": (lambda row: True, None), "query": (tagged_x, TAG_QUERY), "box": (in_box, BOX_QUERY)}[variant]
    path = f"/{COLLECTION[level]}/_count" + (f"?query={q(query)}" if query else "")
    r = world.call(principal, "GET", path)
    expected = expected_rows(level, principal, pred)
    if expected == 401:
        assert_error(r, 401, "Unauthorized")
    else:
        assert r.status == 200, r
        assert r.body == {"count": len(expected)}


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_get_by_id(world, level, principal):
    actual, expected = {}, {}
    for row in ROWS:
        r = world.call(principal, "GET", f"/{COLLECTION[level]}/{row}")
        actual[row] = r.status
        if r.status == 200:
            assert r.body["_id"] == row
            assert r.body["_acl"]["creator"] == world.expected_creator(ROWS[row][0])
        else:
            assert set(r.body) == {"error", "description"}
        visible = VISIBLE[level][principal]
        expected[row] = 401 if visible == 401 else (200 if row in visible else 404)
    assert actual == expected


def test_acl_of_seeded_rows(world):
    """The stored _acl is exactly what the server decided: creator from the session, lists from the client."""
    for level in LEVELS:
        for row in SEEDED[level]:
            doc = world.admin_get(level, row).body
            creator, lists = ROWS[row][0], ROWS[row][1]
            expected = {"creator": world.expected_creator(creator), **world.acl_lists(lists)}
            assert doc["_acl"] == expected, (level, row, doc)


# ---------------------------------------------------------------------------
# Writes: create, PUT (replace and create-by-id), PATCH, DELETE.

@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_create(world, level, principal):
    tag = f"scratch-{uuid.uuid4().hex[:8]}"
    try:
        r = world.call(principal, "POST", f"/{COLLECTION[level]}", {"name": "new", "tag": tag, "location": IN_BOX})
        assert r.status == CREATE[level][principal], r
        if r.status == 201:
            assert r.body["_acl"] == {"creator": world.expected_creator(principal)}
            got = world.admin_get(level, r.body["_id"])
            assert got.status == 200 and got.body["_acl"]["creator"] == world.expected_creator(principal)
        else:
            assert_error(r, r.status, {401: "Unauthorized", 403: "Forbidden"}[r.status])
            count = world.call("admin", "GET", f"/{COLLECTION[level]}/_count?query={q({'tag': tag})}")
            assert count.body == {"count": 0}
    finally:
        world.admin_delete_where(level, {"tag": tag})


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_put_new_id_creates(world, level, principal):
    row_id = f"put-new-{principal}"
    try:
        r = world.call(principal, "PUT", f"/{COLLECTION[level]}/{row_id}", {"name": "by put", "location": IN_BOX})
        assert r.status == CREATE[level][principal], r
        if r.status == 201:
            assert r.body["_acl"]["creator"] == world.expected_creator(principal)
        assert world.admin_get(level, row_id).status == (200 if r.status == 201 else 404)
    finally:
        world.call("admin", "DELETE", f"/{COLLECTION[level]}/{row_id}")


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_update_existing(world, level, principal, method):
    actual, expected = {}, {}
    for row in SEEDED[level] + ["nope"]:
        marker = f"{method}-{principal}-{uuid.uuid4().hex[:6]}"
        if row == "nope":
            # PATCH of a missing row is 404 (PUT of a missing id creates: see above).
            if method == "PUT":
                continue
            body = {"touchedBy": marker}
            expected[row] = 401 if VISIBLE[level][principal] == 401 else 404
        else:
            _, _, location, tag = ROWS[row]
            body = ({"location": location, "tag": tag, "seed": row, "touchedBy": marker}
                    if method == "PUT" else {"touchedBy": marker})
            expected[row] = update_status(level, principal, row)
        r = world.call(principal, method, f"/{COLLECTION[level]}/{row}", body)
        actual[row] = r.status
        if row == "nope":
            continue
        after = world.admin_get(level, row).body
        if r.status == 200:
            assert r.body["touchedBy"] == marker and after["touchedBy"] == marker
            # An update never moves the creator nor drops the lists.
            assert after["_acl"] == {"creator": world.expected_creator(ROWS[row][0]), **world.acl_lists(ROWS[row][1])}
            assert after["seed"] == row and after["tag"] == ROWS[row][3]
        else:
            assert set(r.body) == {"error", "description"}, r
            assert after.get("touchedBy") != marker
    assert actual == expected


@pytest.mark.parametrize("level,principal", MATRIX, ids=MATRIX_IDS)
def test_delete(world, level, principal):
    prefix = f"del-{principal}-"
    try:
        for row in SEEDED[level]:
            world.create_row(level, prefix + row, row, {"scratch": prefix})
        actual, expected = {}, {}
        for row in SEEDED[level]:
            r = world.call(principal, "DELETE", f"/{COLLECTION[level]}/{prefix + row}")
            actual[row] = r.status
            expected[row] = update_status(level, principal, row)
            if r.status == 200:
                assert r.body == {"count": 1}
            assert world.admin_get(level, prefix + row).status == (404 if r.status == 200 else 200)
        r = world.call(principal, "DELETE", f"/{COLLECTION[level]}/{prefix}nope")
        actual["nope"] = r.status
        expected["nope"] = 401 if VISIBLE[level][principal] == 401 else 404
        assert actual == expected
    finally:
        world.admin_delete_where(level, {"scratch": prefix})
