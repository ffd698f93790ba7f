"""Console pages of issue #36 in a real browser against the real roostd: the
Users page creates users, edits profile fields, sets a password and roles;
the Backups page lists, takes and describes backups (and says when they are
off); the Logs page is not flooded by the console's own polling; a banner says
when roostd stops answering and goes when it answers again; empty pages say
what they list and how to begin. Screenshots go to tests/python/artifacts/console/."""

import re
import signal
import tempfile
import time
import uuid

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, FAST_HASHING, Roostd, free_port
from roost_harness import engine
from console_support import (  # skips this module without chromium and Selenium
    By,
    Select,
    browser,
    click,
    console_errors,
    css,
    go,
    shot,
    sign_in,
    visible_text,
    wait,
)

POSTGRES = engine.name() == "postgresql"
PASSWORD = "correct horse battery"
BASE = FAST_HASHING + f"admin_token: {ADMIN}\ndefault_permission: shared\n"


def started(tmp, config, **kw):
    return Roostd(tmp, config, **kw).start()


@pytest.fixture(scope="module")
def roost():
    with tempfile.TemporaryDirectory(prefix="roost-console-pages-") as tmp:
        daemon = started(tmp, BASE + f"backups:\n  dir: {tmp}/backups\n  keep: 3\n")
        try:
            yield daemon
        finally:
            daemon.stop()


@pytest.fixture(scope="module")
def bare():
    """A daemon with nothing in it: no backups.dir, no endpoints, no scripts, no rows."""
    with tempfile.TemporaryDirectory(prefix="roost-console-bare-") as tmp:
        daemon = started(tmp, BASE)
        try:
            yield daemon
        finally:
            daemon.stop()


def signed_in_to(driver, daemon):
    """A fresh sign-in on `daemon` (a token kept from an earlier test would skip the form)."""
    driver.get(daemon.base + "/_/")
    driver.execute_script("sessionStorage.clear()")
    sign_in(driver, daemon)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'nav a[data-page="dashboard"]'))
    return driver


@pytest.fixture
def on(browser, roost):
    return signed_in_to(browser, roost)


def admin(daemon, method, path, body=None):
    return daemon.call(method, path, body, token=ADMIN)


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def log_in(daemon, username, password=PASSWORD):
    return daemon.call("POST", "/login", {"username": username, "password": password})


def api_user(daemon, **fields):
    r = admin(daemon, "POST", "/admin/users", {"username": unique("u"), "password": PASSWORD, **fields})
    assert r.status == 201, r
    return r.body


def open_user(driver, user_id, search):
    go(driver, "dashboard")
    go(driver, "users")
    css(driver, "#user-search").send_keys(search)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-user="{user_id}"]'))
    click(driver, f'tr[data-user="{user_id}"] button')   # the search may re-render the row meanwhile
    wait(driver, lambda d: d.find_elements(By.ID, "profile-json") and d.find_elements(By.CSS_SELECTOR, "#sessions-table tbody tr"))


def set_value(driver, selector, text):
    box = css(driver, selector)
    driver.execute_script("arguments[0].value = ''", box)
    box.send_keys(text)


# ---------------------------------------------------------------------------
# Users.

@pytest.mark.parametrize("with_email", [False, True])
def test_create_a_user_from_the_console(on, roost, with_email):
    driver = on
    go(driver, "users")
    css(driver, "#new-user").click()
    username = unique("made")
    css(driver, "#create-username").send_keys(username)
    if with_email:
        css(driver, "#create-email").send_keys(username + "@example.org")
    css(driver, "#create-password").send_keys(PASSWORD)
    set_value(driver, "#create-profile", '{"displayName": "Made Here", "tags": ["a"]}')
    shot(driver, "users-create-form" + ("-email" if with_email else ""))
    css(driver, "#create-user").click()
    wait(driver, lambda d: f"Created {username}." in visible_text(d, "#users-status"))
    wait(driver, lambda d: visible_text(d, "#user-title") == username and d.find_elements(By.ID, "profile-json"))
    assert '"displayName": "Made Here"' in css(driver, "#profile-json").get_attribute("value")
    if with_email:
        assert "(verified)" in visible_text(driver, "#user-facts")
    shot(driver, "users-created" + ("-email" if with_email else ""))
    r = log_in(roost, username)
    assert r.status == 200 and r.body["user"]["displayName"] == "Made Here", r
    assert console_errors(driver) == []


@pytest.mark.parametrize("case, fill, expected, status", [
    ("taken", lambda u: {"#create-username": u, "#create-password": PASSWORD}, "taken", 409),
    ("short-password", lambda u: {"#create-username": unique("x"), "#create-password": "short"}, "8 to 1024", 400),
    ("bad-json", lambda u: {"#create-username": unique("x"), "#create-password": PASSWORD, "#create-profile": "{oops"}, "Not JSON", None),
    ("array-profile", lambda u: {"#create-username": unique("x"), "#create-password": PASSWORD, "#create-profile": "[1]"}, "JSON object", None),
])
def test_a_refused_create_says_why_and_makes_nobody(on, roost, case, fill, expected, status):
    driver = on
    existing = api_user(roost)
    before = admin(roost, "GET", "/users/_count").body
    go(driver, "dashboard")
    go(driver, "users")
    css(driver, "#new-user").click()
    for selector, text in fill(existing["username"]).items():
        if selector == "#create-password":   # minlength would stop the form before the server is asked
            driver.execute_script("arguments[0].removeAttribute('minlength')", css(driver, selector))
        set_value(driver, selector, text)
    css(driver, "#create-user").click()
    wait(driver, lambda d: expected in visible_text(d, "#create-error"))
    assert admin(roost, "GET", "/users/_count").body == before
    shot(driver, f"users-create-refused-{case}")
    assert console_errors(driver, expected_statuses=(status,) if status else ()) == []


def test_edit_profile_fields(on, roost):
    driver = on
    user = api_user(roost, displayName="Ada", city="Paris", plan={"tier": "free"})
    open_user(driver, user["_id"], user["username"])
    before = css(driver, "#profile-json").get_attribute("value")
    assert '"city": "Paris"' in before and "_id" not in before and '"username"' not in before
    set_value(driver, "#profile-json", '{"displayName": "Ada L.", "plan": {"tier": "pro"}, "languages": ["fr", "en"]}')
    css(driver, "#save-profile").click()
    wait(driver, lambda d: "Saved the profile" in visible_text(d, "#users-status"))
    stored = admin(roost, "GET", f"/users/{user['_id']}").body
    assert stored["displayName"] == "Ada L." and stored["plan"] == {"tier": "pro"} and stored["languages"] == ["fr", "en"]
    assert "city" not in stored and stored["username"] == user["username"]
    shot(driver, "users-profile-saved")
    # A change the server refuses (username is immutable) is shown and changes nothing.
    set_value(driver, "#profile-json", '{"displayName": "Ada L.", "plan": {"tier": "pro"}, "languages": ["fr", "en"], "username": "renamed-x"}')
    css(driver, "#save-profile").click()
    wait(driver, lambda d: "username cannot be changed" in visible_text(d, "#profile-error"))
    assert admin(roost, "GET", f"/users/{user['_id']}").body["username"] == user["username"]
    set_value(driver, "#profile-json", "not json")
    css(driver, "#save-profile").click()
    wait(driver, lambda d: "Not JSON" in visible_text(d, "#profile-error"))
    assert console_errors(driver, expected_statuses=(400, 409)) == []


def test_set_a_new_password_ends_the_sessions(on, roost):
    driver = on
    user = api_user(roost)
    token = log_in(roost, user["username"]).body["token"]
    open_user(driver, user["_id"], user["username"])
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions-table tr[data-session]")) == 1)
    # Too short: the server's rule, shown at the form.
    driver.execute_script("arguments[0].removeAttribute('minlength')", css(driver, "#new-password"))
    css(driver, "#new-password").send_keys("short")
    css(driver, "#set-password").click()
    wait(driver, lambda d: "8 to 1024" in visible_text(d, "#password-error"))
    assert roost.call("GET", "/users/me", token=token).status == 200
    set_value(driver, "#new-password", "a new secret from the admin")
    css(driver, "#set-password").click()
    wait(driver, lambda d: "every session of theirs has ended" in visible_text(d, "#users-status"))
    wait(driver, lambda d: visible_text(d, "#sessions-empty").startswith("No live sessions"))
    assert visible_text(driver, "#password-error") == ""
    shot(driver, "users-password-set")
    assert roost.call("GET", "/users/me", token=token).status == 401
    assert log_in(roost, user["username"]).status == 401
    assert log_in(roost, user["username"], "a new secret from the admin").status == 200
    assert console_errors(driver, expected_statuses=(400,)) == []


def test_roles_of_a_user(on, roost):
    driver = on
    user = api_user(roost)
    roles = sorted(unique("team") for _ in range(2))
    for role in roles:
        assert admin(roost, "POST", "/admin/roles", {"name": role}).status == 201
    open_user(driver, user["_id"], user["username"])
    wait(driver, lambda d: "In no role yet." in visible_text(d, "#user-roles-note"))
    for role in roles:
        Select(css(driver, "#role-choice")).select_by_value(role)
        css(driver, "#add-user-role").click()
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#user-roles li[data-role="{role}"]'))
    assert set(roles) <= set(admin(roost, "GET", f"/admin/users/{user['_id']}/roles").body["roles"])
    shot(driver, "users-roles")
    css(driver, f'button[data-remove-role="{roles[0]}"]').click()
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, f'#user-roles li[data-role="{roles[0]}"]'))
    assert roles[0] not in admin(roost, "GET", f"/admin/users/{user['_id']}/roles").body["roles"]
    assert roles[1] in admin(roost, "GET", f"/admin/users/{user['_id']}/roles").body["roles"]
    assert console_errors(driver) == []


def test_no_roles_at_all_says_where_to_make_them(browser, bare):
    driver = signed_in_to(browser, bare)
    user = api_user(bare)
    open_user(driver, user["_id"], user["username"])
    wait(driver, lambda d: "create them on the Roles page" in visible_text(d, "#user-roles-note"))
    assert not css(driver, "#user-role-form").is_displayed()
    assert console_errors(driver) == []


# ---------------------------------------------------------------------------
# Backups.

def test_backups_list_take_one_and_the_last_ones_state(on, roost):
    driver = on
    go(driver, "backups")
    if POSTGRES:
        wait(driver, lambda d: "PostgreSQL" in visible_text(d, "#backups-off"))
        assert not css(driver, "#backup-now").is_enabled()
        shot(driver, "backups-postgresql")
        return
    wait(driver, lambda d: visible_text(d, "#last-backup-state") or visible_text(d, "#backups-empty"))
    before = len(admin(roost, "GET", "/admin/backups").body["backups"])
    if before == 0:
        assert "Back up now" in visible_text(driver, "#backups-empty")
        assert "None yet." in visible_text(driver, "#last-backup-state")
        shot(driver, "backups-empty")
    css(driver, "#backup-now").click()
    wait(driver, lambda d: "finished: verified" in visible_text(d, "#backups-status"), timeout=60)
    wait(driver, lambda d: css(d, "#last-backup-state").get_attribute("data-state") == "verified")
    listed = admin(roost, "GET", "/admin/backups").body["backups"]
    assert len(listed) == before + 1 and listed[-1]["state"] == "verified"
    newest = listed[-1]["name"]
    assert newest in visible_text(driver, "#last-backup-state")
    rows = driver.find_elements(By.CSS_SELECTOR, "#backups-table tr[data-backup]")
    assert rows[0].get_attribute("data-backup") == newest and rows[0].get_attribute("data-state") == "verified"
    assert css(driver, "#backup-now").is_enabled()
    shot(driver, "backups-taken")
    assert console_errors(driver) == []


def test_backups_say_they_are_off_without_a_dir(browser, bare):
    driver = signed_in_to(browser, bare)
    body = admin(bare, "GET", "/admin/backups").body
    assert body["unavailable"] and body["backups"] == []
    go(driver, "backups")
    wait(driver, lambda d: visible_text(d, "#backups-off"))
    assert ("PostgreSQL" if POSTGRES else "backups.dir") in visible_text(driver, "#backups-off")
    assert ("PostgreSQL" if POSTGRES else "backups.dir") in visible_text(driver, "#backups-empty")
    assert body["embeddedDatabase"] is not POSTGRES
    assert bool(visible_text(driver, "#backups-how")) is not POSTGRES    # how to set backups.dir: not on PostgreSQL
    assert not css(driver, "#backup-now").is_enabled()
    assert "Failed" not in driver.find_element(By.TAG_NAME, "main").text
    shot(driver, "backups-off")
    assert console_errors(driver) == []


# ---------------------------------------------------------------------------
# Logs.

def log_rows(driver):
    """The log table's rows as one line of text each, read in one script call (up to 500 rows: one
    WebDriver call per row took most of a minute)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#log-body tr[data-seq]'),"
        " (r) => r.innerText.replace(/\\s+/g, ' ').trim())")


def test_logs_hide_the_consoles_own_polling(on, roost):
    driver = on
    go(driver, "dashboard")
    wait(driver, lambda d: "Updated" in visible_text(d, "#stats-updated"))
    time.sleep(2.5)                                    # a few stats polls
    admin(roost, "GET", "/admin/stats")                # polling-like, from elsewhere: hidden too (a 200)
    refused = roost.call("GET", "/admin/stats")        # a refused one stays visible
    assert refused.status == 401
    marker = unique("marker")
    roost.call("GET", "/admin/files?limit=1", token=ADMIN, headers={"X-Request-Id": marker})
    go(driver, "logs")
    wait(driver, lambda d: any(marker in r for r in log_rows(d)))
    time.sleep(2.5)                                    # the page's own polls
    rows = log_rows(driver)
    assert not [r for r in rows if re.search(r"GET /admin/(stats|logs)\S* 200 ", r)], rows
    assert [r for r in rows if re.search(r"GET /admin/stats 401 ", r)], rows
    shot(driver, "logs-without-polling")
    # Shown on request, and the server agrees.
    css(driver, "#log-polling").click()
    wait(driver, lambda d: any(re.search(r"GET /admin/stats\S* 200 ", r) for r in log_rows(d)))
    wait(driver, lambda d: any(re.search(r"GET /admin/logs\S* 200 ", r) for r in log_rows(d)))
    shot(driver, "logs-with-polling")
    shown = admin(roost, "GET", "/admin/logs?polling=true&limit=2000").body["entries"]
    hidden = admin(roost, "GET", "/admin/logs?limit=2000").body["entries"]
    polled = lambda e: e["label"] == "access" and e["fields"].get("route") in ("/admin/stats", "/admin/logs") and e["fields"].get("status") == "200"
    assert any(map(polled, shown)) and not any(map(polled, hidden))
    css(driver, "#log-polling").click()
    assert console_errors(driver, expected_statuses=(401,)) == []


@pytest.mark.parametrize("level, request_id, expected", [
    ("critical", "", "No entries at critical or above yet"),
    ("trace", "no-such-request-id", "No entry of request no-such-request-id"),
])
def test_logs_empty_states(on, roost, level, request_id, expected):
    driver = on
    go(driver, "logs")
    Select(css(driver, "#log-level")).select_by_value(level)
    if request_id:
        css(driver, "#log-request-id").send_keys(request_id)
    wait(driver, lambda d: expected in visible_text(d, "#log-empty"))
    assert "No entries match." not in driver.find_element(By.TAG_NAME, "main").text
    Select(css(driver, "#log-level")).select_by_value("trace")


# ---------------------------------------------------------------------------
# roostd not answering.

def banner(driver):
    return visible_text(driver, "#offline-banner")


@pytest.mark.parametrize("how", ["sigstop", "stopped"])
def test_a_banner_while_roostd_does_not_answer(browser, how):
    with tempfile.TemporaryDirectory(prefix="roost-console-outage-") as tmp:
        daemon = started(tmp, BASE, port=free_port())
        try:
            driver = signed_in_to(browser, daemon)
            go(driver, "dashboard")
            wait(driver, lambda d: "Updated" in visible_text(d, "#stats-updated"))
            if how == "sigstop":
                daemon.signal(signal.SIGSTOP)          # accepts connections, answers nothing
            else:
                daemon.stop()                          # connections refused
            wait(driver, lambda d: re.fullmatch(r"roostd is not answering \((retrying in \d+ s|retrying now…)\)", banner(d)),
                 timeout=20)
            # A page opened meanwhile shows no endless "Loading…" and no "Failed to fetch".
            go(driver, "hooks")
            wait(driver, lambda d: "Loading…" not in d.find_element(By.TAG_NAME, "main").text, timeout=15)
            main = driver.find_element(By.TAG_NAME, "main").text
            assert "Failed to fetch" not in main, main
            shot(driver, f"offline-banner-{how}")
            if how == "sigstop":
                daemon.signal(signal.SIGCONT)
            else:
                daemon.start()                         # the same port, the same data
            wait(driver, lambda d: banner(d) == "", timeout=45)
            # The page is loaded afresh: its tables are filled (roostd's built-in hooks), with no error left.
            wait(driver, lambda d: "webhooks.outbox" in visible_text(d, "#hooks-table"))
            assert visible_text(driver, "#script-hooks-empty").startswith("No scripts loaded")
            assert "Not loaded" not in driver.find_element(By.TAG_NAME, "main").text
            shot(driver, f"offline-banner-cleared-{how}")
            # The browser's own lines for the requests that found nobody, and nothing else.
            errors = console_errors(driver)
            assert all("Failed to load resource" in e for e in errors), errors
        finally:
            if daemon.alive():
                daemon.signal(signal.SIGCONT)
            daemon.stop(strict=False)


# ---------------------------------------------------------------------------
# Empty states.

EMPTY = [
    ("files", "#files-empty", "No files yet. This page lists every upload"),
    ("webhooks", "#endpoints-empty", "No endpoints yet. An endpoint gets a signed POST"),
    ("webhooks", "#deliveries-empty", "No deliveries yet."),
    ("push", "#push-devices-empty", "No devices yet."),
    ("push", "#push-deliveries-empty", "No pushes yet."),
    ("hooks", "#script-hooks-empty", "No scripts loaded."),
    ("roles", "#roles-empty", "No roles yet. A role names a group of users"),
    ("logs", "#log-empty", None),   # never empty in practice: its absence is fine, "No entries match." is not
]


@pytest.mark.parametrize("page, selector, expected", EMPTY, ids=[f"{p}-{s[1:]}" for p, s, _ in EMPTY])
def test_empty_pages_say_what_they_list_and_how_to_begin(browser, bare, page, selector, expected):
    driver = signed_in_to(browser, bare)
    go(driver, page)
    if expected:
        wait(driver, lambda d: expected in visible_text(d, selector))
        shot(driver, f"empty-{page}-{selector[1:]}")
    else:
        time.sleep(1.5)
    assert not re.search(r"\bNo (files|endpoints|deliveries|devices|pushes|roles|entries)( match)?\.$",
                         driver.find_element(By.TAG_NAME, "main").text, re.M)
    assert console_errors(driver) == []


@pytest.mark.parametrize("page, select, selector, expected", [
    ("webhooks", "#delivery-status", "#deliveries-empty", "No dead deliveries. Choose “all”"),
    ("push", "#push-status", "#push-deliveries-empty", "No dead pushes. Choose “all”"),
])
def test_a_filter_that_matches_nothing_says_so_differently(browser, bare, page, select, selector, expected):
    driver = signed_in_to(browser, bare)
    go(driver, page)
    wait(driver, lambda d: visible_text(d, selector))
    Select(css(driver, select)).select_by_value("dead")
    wait(driver, lambda d: expected in visible_text(d, selector))
    assert console_errors(driver) == []
