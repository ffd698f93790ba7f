"""The admin console at /_/ in a real browser: Debian's chromium, headless,
driven by Selenium. Every test fails on a JavaScript error or a CSP
violation in the browser's console, and screenshots of every page go to
tests/python/artifacts/console/."""

import hashlib
import threading
import time
import urllib.request

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, png
from webhook_support import user
from console_support import (  # skips this module without chromium and Selenium
    By,
    Select,
    browser,
    click,
    console_errors,
    css,
    go,
    open_records,
    roost,
    set_editor,
    shot,
    sign_in,
    signed_in,
    viewport,
    visible_text,
    wait,
)


def test_wrong_or_missing_token_shows_sign_in_and_reveals_nothing(browser, roost):
    browser.get(roost.base + "/_/")
    wait(browser, lambda d: d.find_elements(By.ID, "token"))
    assert not browser.find_elements(By.CSS_SELECTOR, "nav")
    sign_in(browser, roost, token="not-the-admin-token-but-long-enough-000")
    wait(browser, lambda d: "refused" in visible_text(d, "#signin-error"))
    assert not browser.find_elements(By.CSS_SELECTOR, "nav")
    assert browser.execute_script("return sessionStorage.getItem('roost.adminToken')") is None
    shot(browser, "signin-refused")
    # A user's token is refused too, with its own message.
    _, user_token = user(roost, "mallory")
    sign_in(browser, roost, token=user_token)
    wait(browser, lambda d: "user\u2019s session token" in visible_text(d, "#signin-error"))
    assert not browser.find_elements(By.CSS_SELECTOR, "nav")
    assert console_errors(browser, expected_statuses=(401, 403)) == []


@pytest.mark.parametrize("method,path", [
    ("GET", "/admin/stats"), ("GET", "/admin/logs"), ("GET", "/admin/collections"), ("GET", "/admin/files"),
    ("GET", "/admin/users/u1/sessions"), ("DELETE", "/admin/users/u1/sessions"),
    ("DELETE", "/admin/users/u1/sessions/0123456789abcdef"), ("POST", "/admin/webhooks/endpoints/closed-port/disable"),
    ("GET", "/admin/hooks"), ("GET", "/admin/webhooks/endpoints"), ("GET", "/admin/webhooks/deliveries"),
    ("GET", "/admin/push/devices"), ("GET", "/admin/push/deliveries"), ("GET", "/admin/push/deliveries/1"),
    ("GET", "/admin/roles"), ("GET", "/admin/roles/r/members"),
])
def test_every_admin_endpoint_refuses_other_tokens(roost, method, path):
    _, user_token = user(roost, f"eve{abs(hash((method, path))) % 10**8}")
    assert roost.call(method, path).status == 401
    assert roost.call(method, path, token="wrong-token-wrong-token-wrong-token").status == 401
    resp = roost.call(method, path, token=user_token)
    status, body = resp.status, resp.body
    assert status == 403 and body["error"] == "Forbidden"


def test_page_and_assets_have_cache_headers_and_a_strict_policy(roost):
    with urllib.request.urlopen(roost.base + "/_/") as r:
        html = r.read().decode()
        assert r.headers["Cache-Control"] == "no-cache"
        csp = r.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    src = html.split('src="')[1].split('"')[0]
    assert src.startswith("/_/assets/") and src.endswith("/app.js")
    with urllib.request.urlopen(roost.base + src) as r:
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert r.headers["Content-Type"].startswith("text/javascript")


def test_dashboard_numbers_change_under_load(signed_in, roost):
    driver = signed_in
    go(driver, "dashboard")
    wait(driver, lambda d: "Updated" in d.find_element(By.ID, "stats-updated").text)
    stop = threading.Event()

    def load():
        while not stop.is_set():
            try:
                urllib.request.urlopen(roost.base + "/healthz", timeout=2).read()
            except OSError:
                pass

    threads = [threading.Thread(target=load, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        def busy(d):
            text = d.find_element(By.CSS_SELECTOR, '[data-value="requestsPerSecond"]').text.replace(",", "")
            return text not in ("–", "") and float(text) >= 50
        wait(driver, busy, timeout=15)
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, '[data-metric="requestsPerSecond"] path.line').get_attribute("d"))
    finally:
        stop.set()
        for t in threads:
            t.join()
    shot(driver, "dashboard")
    # The README's picture (docs/console.png is a copy of this one, kept small).
    viewport(driver, 960, 600)
    try:
        time.sleep(1.2)
        shot(driver, "readme-dashboard")
    finally:
        viewport(driver, 1280, 800)
    assert console_errors(driver) == []


def test_records_create_edit_conflict_filter_sort_and_delete(signed_in, roost):
    driver = signed_in
    for n in range(3):
        assert roost.call("POST", "/notes", {"title": f"seed {n}", "n": n + 10}, token=ADMIN).status == 201
    readers = [user(roost, f"reader{i}")[0] for i in (1, 2)]   # _acl entries must name existing users
    open_records(driver, "notes")
    # Create.
    css(driver, "#new-record").click()
    set_editor(driver, '{"_id": "console-1", "title": "from the console", "n": 1}')
    css(driver, "#acl-read").send_keys(", ".join(readers))
    css(driver, "#save-record").click()
    wait(driver, lambda d: visible_text(d, "#editor-status") == "Created.")
    resp = roost.call("GET", "/notes/console-1", token=ADMIN)
    status, doc = resp.status, resp.body
    assert status == 200 and doc["title"] == "from the console" and doc["_acl"]["read"] == readers
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-id="console-1"]'))
    # Edit.
    set_editor(driver, '{"title": "edited", "n": 2}')
    css(driver, "#save-record").click()
    wait(driver, lambda d: visible_text(d, "#editor-status") == "Saved.")
    assert roost.call("GET", "/notes/console-1", token=ADMIN).body["title"] == "edited"
    shot(driver, "records-editor")
    # A concurrent edit: the console's save must not overwrite it.
    assert roost.call("PATCH", "/notes/console-1", {"title": "changed elsewhere"}, token=ADMIN).status == 200
    set_editor(driver, '{"title": "stale edit", "n": 3}')
    css(driver, "#save-record").click()
    wait(driver, lambda d: "Conflict" in visible_text(d, "#conflict"))
    assert roost.call("GET", "/notes/console-1", token=ADMIN).body["title"] == "changed elsewhere"
    shot(driver, "records-conflict")
    css(driver, "#reload-record").click()
    wait(driver, lambda d: "changed elsewhere" in d.find_element(By.ID, "record-json").get_attribute("value"))
    # Filter: a compiler error shows inline, a good filter narrows the rows.
    box = css(driver, "#filter")
    box.send_keys('{"n": {"$where": 1}}')
    wait(driver, lambda d: "UnsupportedOperator" in visible_text(d, "#filter-error") or "$where" in visible_text(d, "#filter-error"))
    shot(driver, "records-filter-error")
    box.clear()
    box.send_keys('{"n": {"$gte": 11}}')
    wait(driver, lambda d: visible_text(d, "#filter-error") == "" and len(d.find_elements(By.CSS_SELECTOR, "#records-table tbody tr[data-id]")) == 2)
    # Sort by a column, descending on the second click.
    css(driver, 'button[data-sort="n"]').click()
    wait(driver, lambda d: css(d, 'button[data-sort="n"]').find_element(By.XPATH, "..").get_attribute("aria-sort") == "ascending")
    css(driver, 'button[data-sort="n"]').click()
    wait(driver, lambda d: css(d, 'button[data-sort="n"]').find_element(By.XPATH, "..").get_attribute("aria-sort") == "descending")
    ids = [r.get_attribute("data-id") for r in driver.find_elements(By.CSS_SELECTOR, "#records-table tbody tr[data-id]")]
    titles = [roost.call("GET", f"/notes/{i}", token=ADMIN).body["n"] for i in ids]
    assert titles == sorted(titles, reverse=True)
    shot(driver, "records")
    box.clear()
    box.send_keys("{}")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#records-table tbody tr[data-id]")) == 4)
    # Delete (two clicks: Delete, then Confirm delete).
    css(driver, 'button[data-open="console-1"]').click()
    wait(driver, lambda d: "console-1" in d.find_element(By.ID, "editor-title").text)
    css(driver, "#delete-record").click()
    css(driver, "#delete-record").click()
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-id="console-1"]'))
    assert roost.call("GET", "/notes/console-1", token=ADMIN).status == 404
    assert console_errors(driver, expected_statuses=(400, 412)) == []


def test_collections_and_hooks_pages(signed_in, roost):
    driver = signed_in
    go(driver, "collections")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-collection="notes"]'))
    shot(driver, "collections")
    assert roost.call("GET", "/fn/console-ping").body == {"pong": True}
    go(driver, "hooks")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hooks-table tbody tr")) >= 1
         and "Loading" not in d.find_element(By.ID, "hooks-table").text)
    # built-in hooks have no budget (they only read and write the store)
    builtins = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#hooks-table tbody tr") if "webhooks.outbox" in r.text]
    assert builtins and all(r.endswith(" none") for r in builtins), builtins
    # the scripts' handlers beside the built-ins: file:line, calls, errors, time
    rows = wait(driver, lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#script-hooks-table tbody tr")
                                   if "10-console.lua:" in r.text])
    assert any(r.startswith("before create console_probes 10-console.lua:2 0 0") for r in rows), rows
    assert any(r.startswith("route GET console-ping 10-console.lua:3 1 0") and r.endswith(" ms") for r in rows), rows
    shot(driver, "hooks")
    assert console_errors(driver) == []


def test_upload_an_image_and_see_its_thumbnail(signed_in, roost, tmp_path):
    driver = signed_in
    go(driver, "files")
    image = tmp_path / "console-test.png"
    image.write_bytes(png(300, 200, 7))
    css(driver, "#upload-input").send_keys(str(image))
    css(driver, "#upload-button").click()
    wait(driver, lambda d: "Uploaded" in visible_text(d, "#files-status"))
    thumb = wait(driver, lambda d: [i for i in d.find_elements(By.CSS_SELECTOR, "img[data-thumb]")
                                    if d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i)], timeout=20)[0]
    assert driver.execute_script("return arguments[0].naturalWidth", thumb) == 128
    tile = css(driver, f'article[data-file="{thumb.get_attribute("data-thumb")}"]')
    assert "300×200" in tile.text and "image/png" in tile.text and "console-test.png" in tile.text
    shot(driver, "files")
    assert console_errors(driver) == []


def test_retry_a_dead_webhook_delivery(signed_in, roost):
    driver = signed_in
    assert roost.call("POST", "/notes", {"title": "to a closed port"}, token=ADMIN).status == 201
    deadline = time.monotonic() + 15
    while not roost.call("GET", "/admin/webhooks/deliveries?status=dead", token=ADMIN).body and time.monotonic() < deadline:
        time.sleep(0.1)
    dead = roost.call("GET", "/admin/webhooks/deliveries?status=dead", token=ADMIN).body
    assert dead, "no delivery went dead"
    rid = dead[0]["id"]
    attempts = dead[0]["attempts"]
    go(driver, "webhooks")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#deliveries-table tbody tr"))  # the first (unfiltered) list is in
    Select(css(driver, "#delivery-status")).select_by_value("dead")
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'button[data-retry="{rid}"]'))
    # The filtered list may replace the rows found first: click whichever button is there now.
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'button[data-details="{rid}"]').click() or True)
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#attempts-table tbody tr")) == attempts)
    shot(driver, "webhooks")
    wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'button[data-retry="{rid}"]').click() or True)
    wait(driver, lambda d: "queued again" in visible_text(d, "#webhooks-status"))
    # A re-queued delivery starts counting again from 0; its first attempt after the retry is new.
    first_before = dead[0]["updatedAt"]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        d = roost.call("GET", f"/admin/webhooks/deliveries/{rid}", token=ADMIN).body
        if d["attempts"] >= 1 and d["attemptLog"][0]["at"] > first_before:
            break
        time.sleep(0.1)
    assert d["attempts"] >= 1 and d["attemptLog"][0]["at"] > first_before, f"the retried delivery was not attempted again: {d}"
    # Disable, enable, and add an endpoint whose secret shows once.
    css(driver, 'button[data-disable="closed-port"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'button[data-enable="closed-port"]'))
    assert roost.call("GET", "/admin/webhooks/endpoints", token=ADMIN).body[0]["enabled"] is False
    css(driver, 'button[data-enable="closed-port"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'button[data-disable="closed-port"]'))
    css(driver, "#endpoint-name").send_keys("second")
    css(driver, "#endpoint-url").send_keys("http://127.0.0.1:9/hook")
    css(driver, "#endpoint-events").send_keys("notes.deleted")
    css(driver, "#add-endpoint").click()
    wait(driver, lambda d: visible_text(d, "#secret-value").startswith("whsec_"))
    assert console_errors(driver) == []


def test_users_sessions_revoke_and_logs(signed_in, roost):
    driver = signed_in
    user_id, user_token = user(roost, "carol")
    go(driver, "users")
    css(driver, "#user-search").send_keys("caro")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-user="{user_id}"]'))
    click(driver, f'tr[data-user="{user_id}"] button')   # the search may render the row again meanwhile
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions-table tr[data-session]")) == 1)
    shot(driver, "users")
    css(driver, "#revoke-all").click()
    wait(driver, lambda d: "Revoked 1" in visible_text(d, "#users-status"))
    assert roost.call("GET", "/users/me", token=user_token).status == 401
    # Logs, filtered by one request id.
    req = urllib.request.Request(roost.base + "/healthz", headers={"X-Request-Id": "console-log-check-42"})
    urllib.request.urlopen(req).read()
    go(driver, "logs")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log-body tr[data-seq]")) > 3)
    shot(driver, "logs")
    css(driver, "#log-request-id").send_keys("console-log-check-42")
    wait(driver, lambda d: (rows := d.find_elements(By.CSS_SELECTOR, "#log-body tr[data-seq]")) and len(rows) == 1
         and "/healthz" in rows[0].text)
    assert console_errors(driver) == []


def test_push_page_shows_devices_with_their_deliveries(signed_in, roost):
    driver = signed_in
    _, token = user(roost, "pushy")
    assert roost.call("POST", "/push/devices", {"platform": "ios", "token": "c0ffee00000000000000000000000000000000000000000000000000abcd1234", "sync": True}, token).status == 201
    go(driver, "push")
    # the token is shown as a preview and found by its opaque id, never in full
    tid = hashlib.sha256(b"c0ffee00000000000000000000000000000000000000000000000000abcd1234").hexdigest()[:16]
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"#push-devices-table tr[data-device='{tid}']"))
    row = css(driver, f"#push-devices-table tr[data-device='{tid}']").text
    assert "ios" in row and "yes" in row and " 0 " in f" {row} " and "c0ffee…" in row and "abcd1234" not in row
    wait(driver, lambda d: "No pushes yet." in visible_text(d, "#push-deliveries-table"))
    assert console_errors(driver) == []


def test_roles_page_creates_roles_and_manages_members(signed_in, roost):
    driver = signed_in
    uid, _ = user(roost, "rolemember")
    go(driver, "roles")
    css(driver, "#role-name").send_keys("console-editors")
    css(driver, "#add-role").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#roles-table tr[data-role='console-editors']"))
    css(driver, "#role-name").send_keys("bad name")
    css(driver, "#add-role").click()   # the browser's pattern check stops it; the server would say 400
    assert not driver.find_elements(By.CSS_SELECTOR, "#roles-table tr[data-role='bad name']")
    css(driver, "#roles-table button[data-members='console-editors']").click()
    wait(driver, lambda d: "No members yet." in visible_text(d, "#members-table"))
    css(driver, "#member-id").send_keys(uid)
    css(driver, "#add-member").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"#members-table tr[data-member='{uid}']"))
    assert "rolemember" in css(driver, f"#members-table tr[data-member='{uid}']").text
    wait(driver, lambda d: " 1 " in f" {css(d, '#roles-table tr[data-role=console-editors]').text} ")
    css(driver, "#member-id").send_keys("no-such-user")
    css(driver, "#add-member").click()
    wait(driver, lambda d: "Cannot add the member" in visible_text(d, "#roles-error"))
    shot(driver, "roles")
    css(driver, f"#members-table button[data-remove='{uid}']").click()
    wait(driver, lambda d: "No members yet." in visible_text(d, "#members-table"))
    delete = css(driver, "#roles-table button[data-delete='console-editors']")
    delete.click()
    delete.click()
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#roles-table tr[data-role='console-editors']"))
    assert all(r["name"] != "console-editors" for r in roost.call("GET", "/admin/roles", token=ADMIN).body["roles"])
    assert console_errors(driver, expected_statuses=(404,)) == []


def test_every_page_on_a_phone_screen(signed_in, roost):
    driver = signed_in
    viewport(driver, 390, 844, mobile=True)
    try:
        for page in ("dashboard", "collections", "records/notes", "files", "users", "roles", "webhooks", "push", "hooks", "backups", "logs"):
            go(driver, page)
            time.sleep(0.6)
            width, wide = driver.execute_script("""return [document.documentElement.scrollWidth,
                [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1
                  && !e.closest('.table-wrap, .sidebar nav')).slice(0, 5).map((e) => e.tagName + '#' + e.id + '.' + e.className)]""")
            assert width <= 390, f"{page} scrolls sideways at 390 px ({width}): {wide}"
            shot(driver, "phone-" + page.replace("/", "-"))
    finally:
        viewport(driver, 1280, 800)
    assert console_errors(driver) == []


def test_keyboard_reaches_navigation_and_sign_out(signed_in, roost):
    driver = signed_in
    go(driver, "dashboard")
    body = css(driver, "body")
    names = []
    for _ in range(12):
        body = driver.switch_to.active_element
        body.send_keys("\t")
        active = driver.switch_to.active_element
        names.append(active.get_attribute("data-page") or active.get_attribute("id"))
    assert "records" in names and "signout" in names
    unlabelled = driver.execute_script("""
        return [...document.querySelectorAll('input, select, textarea')].filter(
          (e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map((e) => e.id)""")
    assert unlabelled == []


# (content type, what "Open" must do): only raster images open in a tab, as images;
# anything that could run script at the console's origin downloads as bytes.
OPEN_CASES = [
    ("text/html", b"<script>document.title='owned'</script>", None),
    ("image/svg+xml", b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", None),
    ("application/pdf", b"%PDF-1.4\n%%EOF\n", None),
    ("text/plain", b"hello", None),
    ("image/png", None, "image/png"),
]


@pytest.mark.parametrize("content_type,body,viewed_as", OPEN_CASES, ids=[c[0] for c in OPEN_CASES])
def test_open_never_renders_an_upload_at_the_consoles_origin(signed_in, roost, content_type, body, viewed_as):
    driver = signed_in
    raw = body if body is not None else png(40, 30, 3)
    status, _, answer = roost.request("POST", "/files", raw_body=raw,
                                      headers={"Content-Type": content_type, "Authorization": f"Bearer {ADMIN}"})
    if status != 201:
        pytest.fail(f"upload of {content_type} refused: {status} {answer[:200]}")
    file_id = __import__("json").loads(answer)["_id"]
    go(driver, "dashboard")
    go(driver, "files")   # a fresh list, with the new upload
    button = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'button[data-open="{file_id}"]'))[0]
    handles = set(driver.window_handles)
    driver.execute_script("""
        window.__opened = []; window.__types = {};
        const make = URL.createObjectURL;
        URL.createObjectURL = function (b) { const u = make.call(URL, b); window.__types[u] = b.type; return u; };
        HTMLAnchorElement.prototype.click = function () {
          window.__opened.push({ download: this.hasAttribute('download'), target: this.target, href: this.href });
        };""")
    button.click()
    opened = wait(driver, lambda d: d.execute_script("return window.__opened.length && window.__opened"))
    assert len(opened) == 1 and opened[0]["href"].startswith("blob:"), opened
    blob_type = driver.execute_script("return window.__types[arguments[0]]", opened[0]["href"])
    if viewed_as:
        assert opened[0]["target"] == "_blank" and not opened[0]["download"] and blob_type == viewed_as, (opened, blob_type)
    else:
        assert opened[0]["download"] and opened[0]["target"] == "" and blob_type == "application/octet-stream", (opened, blob_type)
    assert set(driver.window_handles) == handles
    driver.execute_script("location.reload()")   # the page's own click() back
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'nav a[data-page="dashboard"]'))
