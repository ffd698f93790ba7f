"""Console fixes from issue #36's first look, each in a real browser against
the real roostd: the records table uses the page's width until a record is
opened, and a filter the server rejects leaves no stale rows under its error.
Screenshots go to tests/python/artifacts/console/ like the other console tests."""

import tempfile

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd
from console_support import (  # skips this module without chromium and Selenium
    CONFIG,
    By,
    browser,
    console_errors,
    css,
    open_records,
    shot,
    signed_in,
    viewport,
    visible_text,
    wait,
)

# Two collections the config declares and nobody has written yet.
DECLARED = ["inbox", "shelf"]


@pytest.fixture(scope="module")
def roost():
    declared = "collections:\n" + "".join(f"  {name}:\n    permission: private\n" for name in DECLARED)
    with tempfile.TemporaryDirectory(prefix="roost-console-fixes-") as tmp:
        daemon = Roostd(tmp, CONFIG + declared).start()
        try:
            yield daemon
        finally:
            daemon.stop()


def data_rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#records-table tbody tr[data-id]")


def width(driver, selector):
    return driver.execute_script("return arguments[0].getBoundingClientRect().width", css(driver, selector))


@pytest.mark.parametrize("collection", ["notes", "tasks"])
def test_records_table_uses_the_width_until_a_record_is_opened(signed_in, roost, collection):
    driver = signed_in
    viewport(driver, 1400, 900)
    assert roost.call("POST", f"/{collection}", {"_id": "w1", "title": "wide"}, token=ADMIN).status == 201
    open_records(driver, collection)
    wait(driver, lambda d: data_rows(d))
    assert not css(driver, "#editor").is_displayed()
    closed = width(driver, "#records-table")
    split = width(driver, "#records-split")
    assert closed > 0.9 * split, (closed, split)
    shot(driver, f"records-full-width-{collection}")
    css(driver, 'button[data-open="w1"]').click()
    wait(driver, lambda d: css(d, "#editor").is_displayed())
    opened = width(driver, "#records-table")
    assert opened < 0.75 * split and width(driver, "#editor") > 0.25 * split, (opened, split)
    shot(driver, f"records-editor-open-{collection}")
    css(driver, "#close-editor").click()
    wait(driver, lambda d: not css(d, "#editor").is_displayed() and width(d, "#records-table") > 0.9 * split)
    # A new record is not saved yet: nothing to delete.
    css(driver, "#new-record").click()
    wait(driver, lambda d: css(d, "#editor").is_displayed())
    assert not css(driver, "#delete-record").is_enabled()
    assert console_errors(driver) == []


@pytest.mark.parametrize("collection, bad_filter, expected", [
    ("notes", '{"n": {"$where": 1}}', "$where"),
    ("tasks", '{"title": {"$where": "x"}}', "$where"),
])
def test_a_rejected_filter_clears_the_rows_and_shows_the_servers_error(signed_in, roost, collection, bad_filter, expected):
    driver = signed_in
    for n in range(2):
        assert roost.call("POST", f"/{collection}", {"title": f"row {n}", "n": n}, token=ADMIN).status == 201
    open_records(driver, collection)
    wait(driver, lambda d: len(data_rows(d)) >= 2)
    css(driver, "#filter").send_keys(bad_filter)
    wait(driver, lambda d: visible_text(d, "#filter-error") and expected in visible_text(d, "#filter-error") and not data_rows(d))
    assert not visible_text(driver, "#filter-error").startswith("Not JSON")
    assert "rejected" in visible_text(driver, "#records-table tbody")
    assert css(driver, "#page-range").text == ""
    shot(driver, f"records-filter-rejected-{collection}")
    # A good filter brings rows back and clears the error.
    box = css(driver, "#filter")
    box.clear()
    box.send_keys("{}")
    wait(driver, lambda d: visible_text(d, "#filter-error") == "" and len(data_rows(d)) >= 2)
    assert console_errors(driver, expected_statuses=(400,)) == []


@pytest.mark.parametrize("width", [1400, 390])
def test_log_levels_stay_on_one_line(signed_in, roost, width):
    """A "notice" (here: the reload's) keeps its level cell on one line, on a desktop and a phone."""
    import signal
    driver = signed_in
    viewport(driver, width, 900, mobile=width < 500)
    roost.proc.send_signal(signal.SIGHUP)              # logs "configuration reloaded" at notice
    css(driver, 'nav a[data-page="logs"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#log-body tr[data-level="notice"]'), timeout=15)
    for cell in driver.find_elements(By.CSS_SELECTOR, '#log-body tr[data-seq] td[class^="level-"]'):
        lines = driver.execute_script(
            "const r = document.createRange(); r.selectNodeContents(arguments[0]);"
            "return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size", cell)
        assert lines == 1, cell.text
    shot(driver, f"logs-levels-{width}")
    assert console_errors(driver) == []


@pytest.mark.parametrize("search, expected", [
    ("", "No users yet. This page lists the app's members"),
    ("nobody-like-this", 'No user\'s username or id matches "nobody-like-this"'),
])
def test_users_empty_state_says_what_the_page_shows(signed_in, roost, search, expected):
    driver = signed_in
    css(driver, 'nav a[data-page="users"]').click()
    wait(driver, lambda d: d.find_elements(By.ID, "user-search"))
    if search:
        css(driver, "#user-search").send_keys(search)
    wait(driver, lambda d: expected in visible_text(d, "#users-empty"))
    assert "No users match." not in driver.find_element(By.TAG_NAME, "main").text
    shot(driver, "users-empty" + ("-search" if search else ""))
    assert console_errors(driver) == []


@pytest.mark.parametrize("collection", DECLARED)
def test_a_declared_collection_without_rows_is_listed_and_opens(signed_in, roost, collection):
    listed = {c["name"]: c for c in roost.call("GET", "/admin/collections", token=ADMIN).body}
    assert listed[collection]["count"] == 0 and listed[collection]["permission"] == "private"
    assert roost.call("GET", "/admin/collections").status == 401
    driver = signed_in
    css(driver, 'nav a[data-page="records"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#collection-select option[value="{collection}"]'))
    open_records(driver, collection)
    wait(driver, lambda d: "No records match." in visible_text(d, "#records-table tbody"))
    assert css(driver, "#new-record").is_enabled()
    shot(driver, f"records-declared-empty-{collection}")
    assert console_errors(driver) == []
