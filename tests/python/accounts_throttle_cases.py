"""Per-account log-in throttling, run inside the WaterCooler flow of
test_accounts.py (its daemon, its leak check), which imports these tests in order."""

import time

from roost_harness import assert_error
from accounts_support import PASSWORDS, app


def test_unknown_username_looks_like_wrong_password(app):
    wrong = app.call("POST", "/login", {"username": "bob", "password": "definitely wrong"})
    unknown = app.call("POST", "/login", {"username": "nobody-here", "password": "definitely wrong"})
    assert_error(wrong, 401, "InvalidCredentials")
    assert (unknown.status, unknown.raw) == (wrong.status, wrong.raw)
    drop = {"date", "x-request-id"}
    assert {k: v for k, v in unknown.headers.items() if k not in drop} == {k: v for k, v in wrong.headers.items() if k not in drop}
    assert app.call("POST", "/login", {"username": "bob", "password": PASSWORDS["bob"]}).status == 200


def test_brute_force_is_throttled(app):
    app.call("POST", "/users", {"username": "victim", "password": "the right password"})
    for attempt in range(5):
        r = app.call("POST", "/login", {"username": "victim", "password": f"guess number {attempt}"})
        assert_error(r, 401, "InvalidCredentials")
    # After 5 failures the account is blocked: even the right password is refused.
    r = app.call("POST", "/login", {"username": "victim", "password": "the right password"})
    assert_error(r, 429, "TooManyAttempts")
    retry = int(r.header("Retry-After"))
    assert 1 <= retry <= 900
    # Other accounts log in as usual.
    assert app.call("POST", "/login", {"username": "carol", "password": PASSWORDS["carol"]}).status == 200


def test_throttle_refuses_correct_password_and_doubles(app):
    """Independent of exactly when the block starts: once blocked, the right password
    is refused with Retry-After, and a failure after the block ends blocks longer."""
    app.call("POST", "/users", {"username": "victim2", "password": "the right password"})
    retry = None
    for attempt in range(8):
        r = app.call("POST", "/login", {"username": "victim2", "password": f"guess number {attempt}"})
        if r.status == 429:
            retry = int(r.header("Retry-After"))
            break
        assert_error(r, 401, "InvalidCredentials")
    assert retry is not None, "never throttled after 8 failures"
    assert 1 <= retry <= 900
    r = app.call("POST", "/login", {"username": "victim2", "password": "the right password"})
    assert_error(r, 429, "TooManyAttempts")
    assert 1 <= int(r.header("Retry-After")) <= retry
    time.sleep(retry + 1.1)
    # One more failure after the block: blocked again, for longer.
    assert_error(app.call("POST", "/login", {"username": "victim2", "password": "yet another guess"}), 401)
    r = app.call("POST", "/login", {"username": "victim2", "password": "the right password"})
    assert_error(r, 429, "TooManyAttempts")
    assert int(r.header("Retry-After")) > retry
