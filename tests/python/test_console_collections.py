"""The console's collection editor (issue #36) in a real browser against the
real roostd: a new collection from the form (level, indexes, references,
rules, a schema from the field list) checked by the server as you type;
editing a runtime collection with If-Match; a config-managed one shown
read-only with its reason; index builds polled to ready; Empty and Drop
behind a typed name; the documents that fail a schema; and the Records
page's form made from the schema, with violations shown at their fields.
Screenshots go to tests/python/artifacts/console/ like the other console tests."""

import tempfile
import time

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd
from console_support import (  # skips this module without chromium and Selenium
    CONFIG,
    By,
    Select,
    browser,
    console_errors,
    css,
    go,
    open_records,
    set_editor,
    shot,
    signed_in,
    viewport,
    visible_text,
    wait,
)

# A collection the config file sets up: the console shows it read-only.
CONFIGURED = "ledger"


@pytest.fixture(scope="module")
def roost():
    declared = (f"collections:\n  {CONFIGURED}:\n    permission: private\n    indexes: [amount]\n"
                "    schema: {type: object, required: [amount], properties: {amount: {type: integer}, memo: {type: string}}}\n"
                "  pets:\n    references:\n      owner: {collection: owners-config, on_delete: restrict}\n")
    with tempfile.TemporaryDirectory(prefix="roost-console-collections-") as tmp:
        daemon = Roostd(tmp, CONFIG + declared).start()
        try:
            yield daemon
        finally:
            daemon.stop()


def admin(roost, method, path, body=None, headers=None):
    return roost.call(method, path, body, token=ADMIN, headers=headers)


def settings_of(roost, name):
    r = admin(roost, "GET", f"/admin/collections/{name}")
    assert r.status == 200, r
    return r.body


def seed(roost, name, docs):
    for start in range(0, len(docs), 100):
        ops = [{"method": "POST", "path": f"/{name}", "body": d} for d in docs[start:start + 100]]
        r = admin(roost, "POST", "/_batch", {"operations": ops})
        assert r.status == 200, r


def type_into(driver, selector, text, clear=True):
    el = css(driver, selector)
    if clear:
        driver.execute_script("arguments[0].value = ''", el)
    el.send_keys(text)
    return el


def add_field(driver, name, kind, required=False, target=None):
    css(driver, "#add-field").click()
    row = driver.find_elements(By.CSS_SELECTOR, "#schema-fields tbody tr")[-1]
    row.find_element(By.CSS_SELECTOR, ".f-name").send_keys(name)
    Select(row.find_element(By.CSS_SELECTOR, ".f-type")).select_by_value(kind)
    if required:
        row.find_element(By.CSS_SELECTOR, ".f-required").click()
    if target:
        row.find_element(By.CSS_SELECTOR, ".f-target").send_keys(target)


def fresh(driver, page):
    """Opens `page` anew (the same hash again would not reload it)."""
    go(driver, "dashboard")
    go(driver, page)


def open_editor(driver, name):
    fresh(driver, "collections")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'a[data-edit="{name}"]'))
    css(driver, f'a[data-edit="{name}"]').click()
    wait(driver, lambda d: name in visible_text(d, "#collection-title") and "documents" in visible_text(d, "#collection-meta"))


CREATE_CASES = [
    # (name, level, index, bad rules and the server's words, good rules)
    ("products", "private", "price", '{"read": {"$where": 1}}', "$where", '{"read": {"price": {"$gte": 0}}}'),
    ("places", "public", "spot:geo", '{"update": {"owner": "@nobody.id"}}', "@nobody.id", '{"update": {"owner": "@caller.id"}}'),
]


@pytest.mark.parametrize("name, level, index, bad_rules, words, good_rules", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_new_collection_is_checked_as_you_type_and_created(signed_in, roost, name, level, index, bad_rules, words, good_rules):
    driver = signed_in
    viewport(driver, 1400, 1000)
    fresh(driver, "collections")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-collection]"))
    css(driver, "#new-collection").click()
    wait(driver, lambda d: d.find_elements(By.ID, "collection-name"))
    type_into(driver, "#collection-name", name)
    Select(css(driver, "#collection-permission")).select_by_value(level)
    css(driver, "#index-add").click()
    path, _, kind = index.partition(":")
    css(driver, "#index-list .i-path").send_keys(path)
    if kind:
        Select(css(driver, "#index-list .i-kind")).select_by_value(kind)
    css(driver, "#reference-add").click()
    css(driver, "#reference-list .r-field").send_keys("owner")
    css(driver, "#reference-list .r-collection").send_keys("users")
    Select(css(driver, "#reference-list .r-on-delete")).select_by_value("cascade")
    # The field list writes the schema.
    add_field(driver, "title", "string", required=True)
    add_field(driver, "price", "number")
    add_field(driver, "count", "integer")
    add_field(driver, "open", "boolean")
    add_field(driver, "when", "date-time")
    add_field(driver, "spot", "geo-point")
    add_field(driver, "owner", "reference", target="users")
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    # Rules the server's own compiler refuses: its words beside the rules editor.
    type_into(driver, "#rules-json", bad_rules)
    wait(driver, lambda d: words in visible_text(d, "#rules-error"))
    assert visible_text(driver, "#check-status") == ""
    shot(driver, f"collections-new-refused-rules-{name}")
    # Not JSON yet: said at once, without the server.
    type_into(driver, "#rules-json", '{"read": ')
    wait(driver, lambda d: "Not JSON yet" in visible_text(d, "#rules-error"))
    type_into(driver, "#rules-json", good_rules)
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status") and visible_text(d, "#rules-error") == "")
    # A schema the server refuses, typed in its JSON editor.
    schema_box = css(driver, "#schema-json")
    good_schema = schema_box.get_attribute("value")
    type_into(driver, "#schema-json", '{"type": "objet"}')
    wait(driver, lambda d: "/type" in visible_text(d, "#schema-error"))
    type_into(driver, "#schema-json", good_schema)
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    assert admin(roost, "GET", f"/admin/collections/{name}").status == 404   # dry runs saved nothing
    shot(driver, f"collections-new-{name}")
    css(driver, "#save-collection").click()
    wait(driver, lambda d: "managed at run time" in visible_text(d, "#collection-meta"))
    assert driver.execute_script("return location.hash") == f"#/collections/edit/{name}"
    got = settings_of(roost, name)
    s = got["settings"]
    assert got["managedBy"] == "runtime" and isinstance(got["version"], int)
    assert s["permission"] == level and s["indexes"] == [index]
    assert s["references"] == {"owner": {"collection": "users", "on_delete": "cascade"}}
    assert s["rules"] == __import__("json").loads(good_rules)
    props = s["schema"]["properties"]
    assert s["schema"]["required"] == ["title"]
    assert props["title"] == {"type": "string"} and props["price"] == {"type": "number"}
    assert props["count"] == {"type": "integer"} and props["open"] == {"type": "boolean"}
    assert props["when"] == {"type": "string", "format": "date-time"} and props["spot"] == {"format": "geo-point"}
    assert props["owner"] == {"type": "string", "format": "reference", "x-roost-collection": "users"}
    # The schema is enforced: a write that breaks it is refused.
    assert admin(roost, "POST", f"/{name}", {"title": 5}).body["error"] == "SchemaViolation"
    # The saved settings come back into the form.
    assert css(driver, "#collection-permission").get_attribute("value") == level
    assert [r.get_attribute("data-field") for r in driver.find_elements(By.CSS_SELECTOR, "#schema-fields tbody tr")] == \
        ["title", "price", "count", "open", "when", "spot", "owner"]
    # The list shows it as managed at run time.
    go(driver, "collections")
    row = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-collection="{name}"]'))[0]
    assert row.get_attribute("data-managed-by") == "runtime" and "run time" in row.text
    assert console_errors(driver, expected_statuses=(400,)) == []


@pytest.mark.parametrize("name, refused, code", [
    ("users", "users", "ReservedCollectionName"),
    (CONFIGURED, CONFIGURED, "ManagedByConfig"),
])
def test_a_name_the_console_cannot_set_up_shows_the_servers_reason(signed_in, roost, name, refused, code):
    driver = signed_in
    fresh(driver, "collections/new")
    type_into(driver, "#collection-name", name)
    wait(driver, lambda d: code in visible_text(d, "#settings-error"))
    css(driver, "#save-collection").click()
    wait(driver, lambda d: code in visible_text(d, "#settings-error"))
    assert driver.execute_script("return location.hash") == "#/collections/new"
    assert console_errors(driver, expected_statuses=(400, 409)) == []


@pytest.mark.parametrize("name", ["drafts", "orders"])
def test_edit_a_runtime_collection_with_if_match(signed_in, roost, name):
    driver = signed_in
    r = admin(roost, "POST", "/admin/collections", {"name": name, "permission": "private", "indexes": ["a", "b"],
                                                    "rules": {"read": {"a": {"$gt": 0}}}})
    assert r.status == 201, r
    open_editor(driver, name)
    assert css(driver, "#collection-permission").get_attribute("value") == "private"
    assert "read" in css(driver, "#rules-json").get_attribute("value")
    Select(css(driver, "#collection-permission")).select_by_value("public")
    driver.find_elements(By.CSS_SELECTOR, "#index-list .row button")[1].click()    # remove index b
    type_into(driver, "#rules-json", "")                                            # back to the level's rules
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    css(driver, "#save-collection").click()
    wait(driver, lambda d: "Saved: version" in visible_text(d, "#collection-saved"))
    got = settings_of(roost, name)
    assert got["version"] > r.body["version"] and f"version {got['version']}." in visible_text(driver, "#collection-saved")
    assert got["settings"] == {"indexes": ["a"], "permission": "public"}
    shot(driver, f"collections-edited-{name}")
    # Someone else changes it meanwhile: the console's save is refused (412), nothing is overwritten.
    assert admin(roost, "PATCH", f"/admin/collections/{name}", {"permission": "shared"}).status == 200
    # The page may still be polling the index it just dropped (every second): a poll must not adopt
    # the newer version behind the form's back, or the save below would overwrite the change.
    time.sleep(1.5)
    Select(css(driver, "#collection-permission")).select_by_value("readonly")
    css(driver, "#save-collection").click()
    wait(driver, lambda d: "Conflict" in visible_text(d, "#collection-conflict"))
    assert settings_of(roost, name)["settings"]["permission"] == "shared"
    shot(driver, f"collections-conflict-{name}")
    assert console_errors(driver, expected_statuses=(412,)) == []


@pytest.mark.parametrize("name, level", [("loose", "private"), ("jotted", "readonly")])
def test_a_collection_written_without_settings_is_set_up_from_the_editor(signed_in, roost, name, level):
    driver = signed_in
    assert admin(roost, "POST", f"/{name}", {"x": 1}).status == 201
    assert settings_of(roost, name)["managedBy"] == "none"
    open_editor(driver, name)
    assert "without settings" in visible_text(driver, "#collection-meta")
    assert css(driver, "#save-collection").text == "Set up collection"
    Select(css(driver, "#collection-permission")).select_by_value(level)
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    css(driver, "#save-collection").click()
    wait(driver, lambda d: "Set up at run time" in visible_text(d, "#collection-saved"))
    got = settings_of(roost, name)
    assert got["managedBy"] == "runtime" and got["settings"] == {"permission": level} and got["count"] == 1
    assert "managed at run time" in visible_text(driver, "#collection-meta")
    assert console_errors(driver) == []


def test_a_config_collection_is_read_only_with_its_reason(signed_in, roost):
    driver = signed_in
    open_editor(driver, CONFIGURED)
    assert "config file" in visible_text(driver, "#managed-reason")
    assert "managed by the config file" in visible_text(driver, "#collection-meta")
    assert css(driver, "#collection-permission").get_attribute("value") == "private"
    assert css(driver, "#index-list .i-path").get_attribute("value") == "amount"
    for selector in ("#collection-permission", "#rules-json", "#schema-json", "#index-list .i-path", "#add-field", "#index-add"):
        assert not css(driver, selector).is_enabled(), selector
    assert not css(driver, "#save-collection").is_displayed()
    assert not css(driver, "#drop-collection").is_displayed()
    assert css(driver, "#empty-collection").is_displayed()      # emptying a config collection is allowed
    shot(driver, "collections-config-read-only")
    assert console_errors(driver) == []


@pytest.mark.parametrize("name, index", [("readings", "n"), ("sightings", "at:geo")])
def test_an_index_added_in_the_console_is_built_and_shown_ready(signed_in, roost, name, index):
    driver = signed_in
    assert admin(roost, "POST", "/admin/collections", {"name": name}).status == 201
    seed(roost, name, [{"n": i, "at": [i % 180, (i % 90) - 45]} for i in range(1500)])
    open_editor(driver, name)
    assert "1,500 documents" in visible_text(driver, "#collection-meta")
    css(driver, "#index-add").click()
    path, _, kind = index.partition(":")
    css(driver, "#index-list .i-path").send_keys(path)
    if kind:
        Select(css(driver, "#index-list .i-kind")).select_by_value(kind)
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    css(driver, "#save-collection").click()
    # The page polls while it builds, and shows it ready without a reload.
    row = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#index-states tr[data-index="{index}"][data-state="ready"]'), timeout=30)
    assert "ready" in row[0].text
    assert index in settings_of(roost, name)["indexes"][0]["index"]
    shot(driver, f"collections-index-ready-{name}")
    assert console_errors(driver) == []


def test_a_building_index_shows_its_progress_and_is_polled_until_ready(signed_in, roost):
    """A build on this machine is over before a person could look, so the page's
    first two real answers are shown as the builder reports a build under way
    (state building, rows done of total); the next, real one must say ready."""
    driver = signed_in
    name = "progress"
    assert admin(roost, "POST", "/admin/collections", {"name": name, "indexes": ["n"]}).status == 201
    seed(roost, name, [{"n": i} for i in range(300)])
    wait(driver, lambda d: settings_of(roost, name)["indexes"] == [{"index": "n", "state": "ready"}])
    fresh(driver, "dashboard")
    driver.execute_script("""
        const real = window.fetch, name = arguments[0];
        window.__detailReads = 0;
        window.__realFetch = real;
        window.fetch = async (url, options) => {
          const answer = await real(url, options);
          if (typeof url !== 'string' || !url.endsWith('/admin/collections/' + name)) return answer;
          const n = ++window.__detailReads;
          if (n > 2) return answer;
          const body = await answer.json();
          body.indexes = body.indexes.map((i) => ({ ...i, state: 'building', rowsDone: 100 * n, rowsTotal: 300 }));
          return new Response(JSON.stringify(body), { status: 200, headers: answer.headers });
        };""", name)
    try:
        go(driver, f"collections/edit/{name}")
        wait(driver, lambda d: "100 of 300 rows" in visible_text(d, '#index-states tr[data-index="n"][data-state="building"]'))
        bar = css(driver, '#index-states tr[data-index="n"] progress')
        assert bar.get_attribute("value") == "100" and bar.get_attribute("max") == "300"
        shot(driver, "collections-index-building")
        wait(driver, lambda d: "200 of 300 rows" in visible_text(d, '#index-states tr[data-index="n"]'), timeout=5)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#index-states tr[data-index="n"][data-state="ready"]'), timeout=5)
        reads = driver.execute_script("return window.__detailReads")
        time.sleep(2.5)   # ready: the polling stops
        assert driver.execute_script("return window.__detailReads") == reads == 3
    finally:
        driver.execute_script("window.fetch = window.__realFetch")
    assert console_errors(driver) == []


@pytest.mark.parametrize("action", ["empty", "drop"])
def test_empty_and_drop_need_the_typed_name(signed_in, roost, action):
    driver = signed_in
    name = f"scratch-{action}"
    assert admin(roost, "POST", "/admin/collections", {"name": name, "permission": "private"}).status == 201
    seed(roost, name, [{"i": i} for i in range(120)])
    open_editor(driver, name)
    css(driver, f"#{action}-collection").click()
    confirm = css(driver, "#confirm-action")
    assert not confirm.is_enabled()
    css(driver, "#confirm-name").send_keys(name[:-1])            # not quite the name
    assert not confirm.is_enabled()
    css(driver, "#confirm-name").send_keys(name[-1] + "x")       # longer than the name
    assert not confirm.is_enabled()
    css(driver, "#confirm-name").send_keys("\b")
    wait(driver, lambda d: css(d, "#confirm-action").is_enabled())
    assert admin(roost, "GET", f"/admin/collections/{name}").body["count"] == 120   # nothing happened yet
    shot(driver, f"collections-confirm-{action}")
    confirm.click()
    done = "Dropped" if action == "drop" else "Emptied: 120 deleted"
    wait(driver, lambda d: done in visible_text(d, "#emptying-status"), timeout=30)
    shot(driver, f"collections-{action}-done")
    if action == "empty":
        got = settings_of(roost, name)
        assert got["count"] == 0 and got["managedBy"] == "runtime"
    else:
        r = admin(roost, "GET", f"/admin/collections/{name}")
        assert r.status == 404 or (r.body["managedBy"] == "none" and r.body["count"] == 0), r
        # The editor's next look finds it gone (its 404, expected below) and stops; on a loaded machine that can follow "Dropped".
        wait(driver, lambda d: not css(d, "#save-collection").is_enabled(), timeout=15)
    assert console_errors(driver, expected_statuses=(404,)) == []


@pytest.mark.parametrize("declared", ["config", "runtime"])
def test_emptying_counts_the_documents_a_reference_keeps(signed_in, roost, declared):
    """pets.owner -> owners-config is declared in the config file; the runtime
    case sets its reference up through the admin API, as the editor does."""
    driver = signed_in
    owners, pets = f"owners-{declared}", "pets" if declared == "config" else "pets-runtime"
    assert admin(roost, "POST", "/admin/collections", {"name": owners}).status == 201
    if declared == "runtime":
        assert admin(roost, "POST", "/admin/collections", {"name": pets, "references": {
            "owner": {"collection": owners, "on_delete": "restrict"}}}).status == 201
    seed(roost, owners, [{"_id": f"o{i}"} for i in range(4)])
    dangling = {"owner": {"_type": "ref", "_collection": owners, "_id": "nobody"}}
    # The reference holds (on every node within the settings sync): a dangling one is refused.
    wait(driver, lambda d: admin(roost, "POST", f"/{pets}", dangling).status == 400, timeout=10)
    r = admin(roost, "POST", f"/{pets}", {"owner": {"_type": "ref", "_collection": owners, "_id": "o1"}})
    assert r.status == 201, r
    open_editor(driver, owners)
    css(driver, "#empty-collection").click()
    css(driver, "#confirm-name").send_keys(owners)
    css(driver, "#confirm-action").click()
    wait(driver, lambda d: "Emptied: 3 deleted, 1 kept by references" in visible_text(d, "#emptying-status"), timeout=30)
    shot(driver, f"collections-empty-kept-{declared}")
    assert [d["_id"] for d in admin(roost, "GET", f"/{owners}").body] == ["o1"]
    assert console_errors(driver) == []


@pytest.mark.parametrize("name", ["catalog", "inventory"])
def test_violations_list_the_stored_documents_that_fail_the_schema(signed_in, roost, name):
    driver = signed_in
    assert admin(roost, "POST", "/admin/collections", {"name": name}).status == 201
    seed(roost, name, [{"_id": f"ok{i}", "price": i} for i in range(5)] +
         [{"_id": "bad-text", "price": "12"}, {"_id": "bad-missing"}, {"_id": "bad-negative", "price": -1}])
    schema = {"type": "object", "required": ["price"], "properties": {"price": {"type": "number", "minimum": 0}}}
    assert admin(roost, "PATCH", f"/admin/collections/{name}", {"schema": schema}).status == 200
    open_editor(driver, name)
    wait(driver, lambda d: css(d, "#violations").is_displayed())
    css(driver, "#check-violations").click()
    wait(driver, lambda d: "8 documents checked" in visible_text(d, "#violations-summary"))
    assert "3 fail the schema" in visible_text(driver, "#violations-summary")
    rows = driver.find_elements(By.CSS_SELECTOR, "#violations-table tbody tr")
    found = {(r.get_attribute("data-violation-id"), r.get_attribute("data-pointer")) for r in rows}
    assert found == {("bad-text", "/price"), ("bad-missing", "/price"), ("bad-negative", "/price")}
    assert not css(driver, "#violations-next").is_displayed()
    shot(driver, f"collections-violations-{name}")
    assert console_errors(driver) == []


def test_the_field_list_keeps_what_it_cannot_show(signed_in, roost):
    """Typed JSON fills the field list; editing the list keeps other keywords and subschemas."""
    driver = signed_in
    fresh(driver, "collections/new")
    type_into(driver, "#collection-name", "kept")
    schema = {"type": "object", "additionalProperties": False, "required": ["name"],
              "properties": {"name": {"type": "string", "minLength": 2}, "tags": {"type": "array", "items": {"type": "string"}}}}
    import json
    type_into(driver, "#schema-json", json.dumps(schema))
    wait(driver, lambda d: [r.get_attribute("data-field") for r in d.find_elements(By.CSS_SELECTOR, "#schema-fields tbody tr")] == ["name", "tags"])
    rows = driver.find_elements(By.CSS_SELECTOR, "#schema-fields tbody tr")
    assert rows[0].find_element(By.CSS_SELECTOR, ".f-type").get_attribute("value") == "string"
    assert rows[0].find_element(By.CSS_SELECTOR, ".f-required").is_selected()
    assert rows[1].find_element(By.CSS_SELECTOR, ".f-type").get_attribute("value") == "other"
    add_field(driver, "score", "number", required=True)
    edited = json.loads(css(driver, "#schema-json").get_attribute("value"))
    assert edited["additionalProperties"] is False and edited["required"] == ["name", "score"]
    assert edited["properties"] == {**schema["properties"], "score": {"type": "number"}}
    # A type changed in the list replaces that subschema only.
    Select(driver.find_elements(By.CSS_SELECTOR, "#schema-fields .f-type")[0]).select_by_value("integer")
    edited = json.loads(css(driver, "#schema-json").get_attribute("value"))
    assert edited["properties"]["name"] == {"type": "integer"} and edited["properties"]["tags"] == schema["properties"]["tags"]
    # Removing a row removes the property and its "required" entry.
    driver.find_elements(By.CSS_SELECTOR, "#schema-fields .f-remove")[2].click()
    edited = json.loads(css(driver, "#schema-json").get_attribute("value"))
    assert set(edited["properties"]) == {"name", "tags"} and edited["required"] == ["name"]
    wait(driver, lambda d: "The server accepts" in visible_text(d, "#check-status"))
    unlabelled = driver.execute_script("""
        return [...document.querySelectorAll('main input, main select, main textarea')].filter(
          (e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map((e) => e.id || e.className)""")
    assert unlabelled == []
    assert admin(roost, "GET", "/admin/collections/kept").status == 404
    assert console_errors(driver) == []


def test_records_form_from_a_config_file_schema(signed_in, roost):
    driver = signed_in
    open_records(driver, CONFIGURED)
    css(driver, "#new-record").click()
    wait(driver, lambda d: css(d, "#record-form").is_displayed())
    assert {e.get_attribute("data-field") for e in driver.find_elements(By.CSS_SELECTOR, "#record-form [data-field]")} == {"amount", "memo"}
    css(driver, "#form-memo").send_keys("lunch")
    css(driver, "#save-record").click()
    wait(driver, lambda d: "required" in visible_text(d, "#form-error-amount"))
    css(driver, "#form-amount").send_keys("12")
    css(driver, "#save-record").click()
    wait(driver, lambda d: visible_text(d, "#editor-status") == "Created.")
    assert visible_text(driver, "#form-error-amount") == ""
    rows = admin(roost, "GET", f"/{CONFIGURED}").body
    assert [(r["amount"], r["memo"]) for r in rows] == [(12, "lunch")]
    assert console_errors(driver, expected_statuses=(400,)) == []


RECORD_SCHEMA = {
    "type": "object", "required": ["title", "price"],
    "properties": {
        "title": {"type": "string", "minLength": 3},
        "price": {"type": "number", "minimum": 0},
        "stock": {"type": "integer"},
        "active": {"type": "boolean"},
        "size": {"enum": ["S", "M", "L"]},
        "due": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.mark.parametrize("name", ["shop", "stall"])
def test_records_form_from_the_schema_and_violations_at_their_fields(signed_in, roost, name):
    driver = signed_in
    viewport(driver, 1400, 1000)
    assert admin(roost, "POST", "/admin/collections", {"name": name, "schema": RECORD_SCHEMA}).status == 201
    open_records(driver, name)
    css(driver, "#new-record").click()
    wait(driver, lambda d: css(d, "#record-form").is_displayed())
    kinds = {e.get_attribute("data-field"): (e.tag_name, e.get_attribute("type"))
             for e in driver.find_elements(By.CSS_SELECTOR, "#record-form [data-field]")}
    assert kinds == {"title": ("input", "text"), "price": ("input", "number"), "stock": ("input", "number"),
                     "active": ("select", "select-one"), "size": ("select", "select-one"), "due": ("input", "datetime-local")}
    assert "tags" not in kinds      # an array is edited in the JSON
    assert "title *" in css(driver, 'label[for="form-title"]').text
    # The form writes into the JSON.
    css(driver, "#form-title").send_keys("Kettle")
    css(driver, "#form-price").send_keys("19.5")
    css(driver, "#form-stock").send_keys("4")
    Select(css(driver, "#form-active")).select_by_value("true")
    Select(css(driver, "#form-size")).select_by_visible_text("M")
    driver.execute_script("arguments[0].value = '2026-12-24T18:30:00'; arguments[0].dispatchEvent(new Event('input'))", css(driver, "#form-due"))
    import json
    doc = json.loads(css(driver, "#record-json").get_attribute("value"))
    assert doc == {"title": "Kettle", "price": 19.5, "stock": 4, "active": True, "size": "M", "due": "2026-12-24T18:30:00Z"}
    css(driver, "#save-record").click()
    wait(driver, lambda d: visible_text(d, "#editor-status") == "Created.")
    rid = json.loads(css(driver, "#record-json").get_attribute("value"))["_id"]
    stored = admin(roost, "GET", f"/{name}/{rid}").body
    assert {k: stored[k] for k in doc} == doc
    # The JSON editor drives the form too.
    set_editor(driver, '{"title": "Teapot", "price": 7, "size": "L", "active": false}')
    wait(driver, lambda d: css(d, "#form-title").get_attribute("value") == "Teapot")
    assert css(driver, "#form-size").get_attribute("value") == '"L"' and css(driver, "#form-active").get_attribute("value") == "false"
    assert css(driver, "#form-stock").get_attribute("value") == ""
    # Violations at their fields: too short a title, a negative price, a missing required one, a bad array item.
    css(driver, "#new-record").click()
    set_editor(driver, '{"title": "ab", "stock": 2, "tags": [1]}')
    css(driver, "#form-price").send_keys("-3")
    css(driver, "#save-record").click()
    wait(driver, lambda d: visible_text(d, "#form-error-title") and visible_text(d, "#form-error-price"))
    assert "3" in visible_text(driver, "#form-error-title")
    assert "0" in visible_text(driver, "#form-error-price")
    assert css(driver, "#form-title").get_attribute("aria-invalid") == "true"
    assert visible_text(driver, "#form-error-stock") == ""
    assert "/tags/0" in visible_text(driver, "#json-error") and "SchemaViolation" in visible_text(driver, "#json-error")
    shot(driver, f"records-schema-violations-{name}")
    # Missing required price: shown at the price field.
    css(driver, "#form-price").clear()
    driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", css(driver, "#form-price"))
    set_editor(driver, '{"title": "long enough"}')
    css(driver, "#save-record").click()
    wait(driver, lambda d: "price" in visible_text(d, "#form-error-price"))
    assert visible_text(driver, "#form-error-title") == ""
    # A collection without a schema has no form.
    assert admin(roost, "POST", "/plain", {"x": 1}).status == 201
    open_records(driver, "plain")
    css(driver, "#new-record").click()
    wait(driver, lambda d: css(d, "#editor").is_displayed())
    assert not css(driver, "#record-form").is_displayed()
    assert console_errors(driver, expected_statuses=(400, 404)) == []


@pytest.mark.parametrize("page", ["collections/new", f"collections/edit/{CONFIGURED}", "records/phone-shop"])
def test_the_editor_fits_a_phone(signed_in, roost, page):
    driver = signed_in
    if page.startswith("records/"):
        assert admin(roost, "POST", "/admin/collections", {"name": "phone-shop", "schema": RECORD_SCHEMA}).status == 201
    viewport(driver, 390, 844, mobile=True)
    try:
        fresh(driver, page)
        if page == "collections/new":
            wait(driver, lambda d: d.find_elements(By.ID, "collection-form"))
            css(driver, "#add-field").click()
            css(driver, "#index-add").click()
            css(driver, "#reference-add").click()
        elif page.startswith("records/"):
            wait(driver, lambda d: "Rows" in d.find_element(By.ID, "page-range").text)
            css(driver, "#new-record").click()
            wait(driver, lambda d: css(d, "#record-form").is_displayed())
        else:
            wait(driver, lambda d: "documents" in visible_text(d, "#collection-meta"))
        width, wide = driver.execute_script("""return [document.documentElement.scrollWidth,
            [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1
              && !e.closest('.table-wrap, .sidebar nav')).slice(0, 5).map((e) => e.tagName + '#' + e.id + '.' + e.className)]""")
        assert width <= 390, f"{page} scrolls sideways at 390 px ({width}): {wide}"
        shot(driver, "phone-" + page.replace("/", "-"))
    finally:
        viewport(driver, 1280, 800)
    assert console_errors(driver) == []
