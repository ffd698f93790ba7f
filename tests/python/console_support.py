"""Shared set-up of the admin-console browser tests: the daemon, headless
chromium and small page helpers."""

import pathlib
import tempfile

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, free_port
from webhook_support import SECRET

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402,F401 (for the tests)
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts" / "console"

if not (pathlib.Path(CHROMIUM).exists() and pathlib.Path(CHROMEDRIVER).exists()):
    pytest.skip("needs Debian's chromium and chromium-driver (make deps installs them)", allow_module_level=True)

# Webhooks to a closed loopback port, retried once after 0.2 s: dead at once.
CONFIG = f"""password_cost: owasp
admin_token: {ADMIN}
default_permission: shared
files_permission: shared
thumbnail_workers: 1
scripts_dir: {pathlib.Path(__file__).resolve().parent / "scripts_support" / "console"}
webhooks:
  retry_schedule: [0.2]
  timeout: 1
  endpoints:
    - name: closed-port
      url: http://127.0.0.1:{free_port()}/hook
      secret: {SECRET}
      events: [notes.created]
"""


@pytest.fixture(scope="module")
def roost():
    with tempfile.TemporaryDirectory(prefix="roost-console-") as tmp:
        daemon = Roostd(tmp, CONFIG).start()
        try:
            yield daemon
        finally:
            daemon.stop()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(CHROMEDRIVER), options=options)
    viewport(driver, 1280, 800)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def viewport(driver, width, height, mobile=False):
    """Emulates exactly this viewport (a desktop window has a minimum width)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def console_errors(driver, expected_statuses=()):
    """Severe browser-console entries (JavaScript errors, CSP violations),
    except the network lines of responses a test provoked on purpose."""
    bad = []
    for entry in driver.get_log("browser"):
        if entry["level"] != "SEVERE":
            continue
        message = entry["message"]
        if "Failed to load resource" in message and any(f"status of {s} " in message for s in expected_statuses):
            continue
        bad.append(message)
    return bad


def wait(driver, predicate, timeout=10):
    return WebDriverWait(driver, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: predicate(d))


def css(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector)


def click(driver, selector, timeout=10):
    """Clicks what `selector` finds, looking again when the page re-rendered it between the find and the click."""
    def clicked(d):
        found = d.find_elements(By.CSS_SELECTOR, selector)
        if not found:
            return False
        found[0].click()
        return True
    wait(driver, clicked, timeout)


def visible_text(driver, selector):
    try:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        return found[0].text if found and found[0].is_displayed() else ""
    except StaleElementReferenceException:  # re-rendered meanwhile: look again
        return ""


def shot(driver, name):
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def sign_in(driver, roost, token=ADMIN):
    driver.get("about:blank")  # a fresh page, so no element of the last one is found
    driver.get(roost.base + "/_/")
    field = wait(driver, lambda d: d.find_element(By.ID, "token"))
    field.clear()
    field.send_keys(token)
    css(driver, "#signin-button").click()


def go(driver, page):
    driver.execute_script("location.hash = arguments[0]", "#/" + page)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'nav a[data-page="{page.split("/")[0]}"][aria-current="page"]'))


@pytest.fixture(scope="module")
def signed_in(browser, roost):
    sign_in(browser, roost)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'nav a[data-page="dashboard"]'))
    return browser


def open_records(driver, collection):
    go(driver, "records/" + collection)
    wait(driver, lambda d: "Rows" in d.find_element(By.ID, "page-range").text)


def set_editor(driver, value):
    area = css(driver, "#record-json")
    driver.execute_script("arguments[0].value = ''", area)
    area.send_keys(value)
