"""First run in a real browser (issue #41): Chromium opens the one-time link
roostd printed, creates the admin credential, sees it once and lands in a
signed-in console. The sign-in page says when no admin credential exists,
and a user's session token gets its own message. Screenshots go to
tests/python/artifacts/console/; with ROOST_DOCS_SCREENSHOTS=1 they replace
docs/first-run-*.png, which the docs show (so a test run leaves the tree clean)."""

import os
import pathlib

import pytest

from roost_harness import FAST_HASHING, Roostd
from console_support import ARTIFACTS, By, browser, console_errors, css, visible_text, wait  # noqa: F401; skips without chromium
from test_first_run import SETUP_LINK

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def fresh(tmp_path):
    with Roostd(tmp_path, FAST_HASHING + "default_permission: shared\n").start() as d:
        yield d


def docs_shot(driver, name):
    folder = DOCS if os.environ.get("ROOST_DOCS_SCREENSHOTS") == "1" else ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"first-run-{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000, path


def test_from_the_printed_link_to_a_signed_in_console(browser, fresh):  # noqa: F811
    # Before setup, the sign-in page says there is no admin credential yet.
    browser.get("about:blank")
    browser.get(fresh.base + "/_/")
    wait(browser, lambda d: "no admin credential yet" in visible_text(d, "#signin-notice"))
    docs_shot(browser, "1-sign-in-without-credential")

    link = SETUP_LINK.search(fresh.log_text()).group(0)
    browser.get("about:blank")
    browser.get(link)
    wait(browser, lambda d: d.find_elements(By.ID, "setup-button"))
    assert "#setup=" not in browser.current_url                 # the code left the address bar
    docs_shot(browser, "2-setup-link")
    css(browser, "#setup-button").click()
    wait(browser, lambda d: d.find_elements(By.ID, "new-token"))
    credential = css(browser, "#new-token").get_attribute("value")
    assert len(credential) >= 32
    docs_shot(browser, "3-credential-created")
    css(browser, "#continue-button").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'nav a[data-page="dashboard"][aria-current="page"]'))
    docs_shot(browser, "4-signed-in")
    assert fresh.call("GET", "/admin/stats", token=credential).status == 200

    # The link is spent: opening it again says so.
    browser.get("about:blank")
    browser.get(link)
    wait(browser, lambda d: d.find_elements(By.ID, "setup-button"))
    css(browser, "#setup-button").click()
    wait(browser, lambda d: "already exists" in visible_text(d, "#setup-error"))
    assert console_errors(browser, expected_statuses=(409,)) == []


def test_a_users_token_gets_its_own_message(browser, fresh):  # noqa: F811
    user_token = fresh.sign_up("wren")["token"]
    browser.get("about:blank")
    browser.get(fresh.base + "/_/")
    field = wait(browser, lambda d: d.find_element(By.ID, "token"))
    field.send_keys(user_token)
    css(browser, "#signin-button").click()
    wait(browser, lambda d: "user\u2019s session token" in visible_text(d, "#signin-error"))
    assert not browser.find_elements(By.CSS_SELECTOR, "nav")
    field = css(browser, "#token")
    field.clear()
    field.send_keys("not-a-token-of-anyone-at-all-0000000")
    css(browser, "#signin-button").click()
    wait(browser, lambda d: "refused" in visible_text(d, "#signin-error"))
    assert console_errors(browser, expected_statuses=(401, 403)) == []


def test_a_wrong_setup_code_is_refused_in_the_browser(browser, fresh):  # noqa: F811
    browser.get("about:blank")
    browser.get(fresh.base + "/_/#setup=" + "x" * 43)
    wait(browser, lambda d: d.find_elements(By.ID, "setup-button"))
    css(browser, "#setup-button").click()
    wait(browser, lambda d: "4 attempts left" in visible_text(d, "#setup-error"))
    assert not browser.find_elements(By.ID, "new-token")
    assert console_errors(browser, expected_statuses=(403,)) == []


def test_the_front_page_looks_like_the_console(browser, fresh):  # noqa: F811
    browser.get(fresh.base + "/")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'a[href="/_/"]'))
    background = browser.execute_script("return getComputedStyle(document.documentElement).getPropertyValue('--panel')")
    assert background.strip() == "#fff"                        # the console's stylesheet applies
    docs_shot(browser, "5-front-page")
    css(browser, 'a[href="/_/"]').click()
    wait(browser, lambda d: d.find_elements(By.ID, "token"))
