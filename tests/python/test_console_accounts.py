"""The console's Users page shows how each user signs in (issue #38): email
and whether it is verified, password, two-factor (with the admin's reset,
DELETE /users/:id/2fa), guest state and linked providers with when they were
linked, from GET /admin/users/:id/account (admin only). In a real browser
against the real roostd; screenshots go to tests/python/artifacts/console/."""

import tempfile

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, FAST_HASHING, Roostd, assert_error
from console_support import By, Select, browser, click, console_errors, css, go, shot, sign_in, visible_text, wait  # skips without chromium
from oidc_support import Issuer
from test_accounts_2fa import totp

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def world():
    acme = Issuer()
    conf = (FAST_HASHING + f"admin_token: {ADMIN}\nanonymous_accounts: true\nsignup_requires: either\n"
            f"oidc_providers:\n  acme: {{discovery_url: '{acme.url}/.well-known/openid-configuration', client_ids: [com.example.app]}}\n")
    with tempfile.TemporaryDirectory(prefix="roost-console-accounts-") as tmp:
        d = Roostd(tmp, conf).start()
        try:
            yield d, acme
        finally:
            d.stop()
            acme.stop()


@pytest.fixture
def on(browser, world):
    d, _ = world
    browser.get(d.base + "/_/")
    browser.execute_script("sessionStorage.clear()")
    sign_in(browser, d)
    wait(browser, lambda dr: dr.find_elements(By.CSS_SELECTOR, 'nav a[data-page="dashboard"]'))
    return browser


def open_user(driver, user_id, search):
    go(driver, "dashboard")
    go(driver, "users")
    css(driver, "#user-search").send_keys(search)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-user="{user_id}"]'))
    click(driver, f'tr[data-user="{user_id}"] button')
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#user-sign-in dd[data-fact="two-factor"]'))


def fact(driver, key):
    return visible_text(driver, f'#user-sign-in dd[data-fact="{key}"]')


def test_identities_verification_and_two_factor_with_its_reset(on, world):
    driver = on
    d, acme = world
    body = d.sign_up("consoleann", email="ann@example.org")
    uid, token = body["user"]["_id"], body["token"]
    r = d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": acme.token(sub="ann-acme", email="ann@acme.example"),
                                              "nonce": "raw-nonce"}, token=token)
    assert r.status == 200, r
    setup = d.call("POST", "/auth/2fa/setup", {"password": PASSWORD}, token=token).body
    assert d.call("POST", "/auth/2fa/enable", {"code": totp(setup["secret"])}, token=token).status == 200

    open_user(driver, uid, "consoleann")
    assert fact(driver, "email") == "ann@example.org (not verified)"
    assert fact(driver, "password") == "set" and fact(driver, "two-factor") == "on"
    rows = driver.find_elements(By.CSS_SELECTOR, "#user-identities tr[data-provider]")
    assert [r.get_attribute("data-provider") for r in rows] == ["acme"]
    cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
    assert cells[0] == "acme" and cells[2][:4].isdigit(), cells
    shot(driver, "users-sign-in")

    # The reset asks to confirm, then turns two-factor off for real.
    reset = css(driver, "#reset-2fa")
    reset.click()
    assert "Confirm" in reset.text
    assert d.call("GET", "/auth/account", token=token).body["twoFactor"] is True
    reset.click()
    wait(driver, lambda dr: "Two-factor is off" in visible_text(dr, "#users-status"))
    wait(driver, lambda dr: fact(dr, "two-factor") == "off")
    assert not css(driver, "#reset-2fa").is_displayed()
    assert d.call("GET", "/auth/account", token=token).body["twoFactor"] is False
    assert console_errors(driver) == []


def test_a_guest_and_a_plain_user(on, world):
    driver = on
    d, _ = world
    g = d.call("POST", "/auth/anonymous").body
    open_user(driver, g["user"]["_id"], g["user"]["_id"])
    assert fact(driver, "password") == "none" and fact(driver, "guest").startswith("yes") and fact(driver, "email") == "none"
    assert visible_text(driver, "#identities-empty") == "No linked providers."
    assert not css(driver, "#reset-2fa").is_displayed()
    plain = d.sign_up("consolebob")
    open_user(driver, plain["user"]["_id"], "consolebob")
    assert fact(driver, "two-factor") == "off" and not driver.find_elements(By.CSS_SELECTOR, '#user-sign-in dd[data-fact="guest"]')
    assert console_errors(driver) == []


def test_the_account_view_is_the_admins(world):
    d, _ = world
    body = d.sign_up("consolecarol")
    uid = body["user"]["_id"]
    assert_error(d.call("GET", f"/admin/users/{uid}/account", token=body["token"]), 403)
    assert_error(d.call("GET", f"/admin/users/{uid}/account"), 401)
    assert_error(d.call("GET", "/admin/users/nobody-here/account", token=ADMIN), 404)
    r = d.call("GET", f"/admin/users/{uid}/account", token=ADMIN)
    assert r.status == 200 and r.body == {"hasPassword": True, "email": None, "emailVerified": False, "twoFactor": False,
                                          "anonymous": False, "identities": []}, r


def test_the_collection_editor_sets_what_a_users_deletion_does(on, world):
    driver = on
    d, _ = world
    assert d.call("POST", "/admin/collections", {"name": "journals", "on_user_delete": "anonymise"}, token=ADMIN).status == 201
    go(driver, "dashboard")
    go(driver, "collections")
    wait(driver, lambda dr: dr.find_elements(By.CSS_SELECTOR, 'a[data-edit="journals"]'))
    css(driver, 'a[data-edit="journals"]').click()
    wait(driver, lambda dr: "documents" in visible_text(dr, "#collection-meta"))
    assert css(driver, "#collection-on-user-delete").get_attribute("value") == "anonymise"
    Select(css(driver, "#collection-on-user-delete")).select_by_value("cascade")
    wait(driver, lambda dr: "The server accepts" in visible_text(dr, "#check-status"))
    css(driver, "#save-collection").click()
    wait(driver, lambda dr: "Saved: version" in visible_text(dr, "#collection-saved"))
    assert d.call("GET", "/admin/collections/journals", token=ADMIN).body["settings"] == {"on_user_delete": "cascade"}
    Select(css(driver, "#collection-on-user-delete")).select_by_value("")
    wait(driver, lambda dr: "The server accepts" in visible_text(dr, "#check-status"))
    css(driver, "#save-collection").click()
    wait(driver, lambda dr: "on_user_delete" not in d.call("GET", "/admin/collections/journals", token=ADMIN).body["settings"])
    assert console_errors(driver) == []
