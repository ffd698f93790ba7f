"""Accounts by email (issue #38): sign-up and log-in by email, verification,
password reset and email change by a 6-digit code or a link, mailed by SMTP
through libcurl from the durable outbox to a real SMTP server on loopback
(aiosmtpd), whose received mail the tests read. Runs on both engines."""

import functools
import re
import statistics
import tempfile
import time

import pytest
import yaml

from roost_harness import Roostd, assert_error, running_roostd
from mail_support import MailBox, config
from openapi_support import SPEC_PATH

PW = "correct horse battery"


@pytest.fixture(scope="module")
def box():
    b = MailBox().start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def d(box):
    """Email or username, unverified accounts may not sign in."""
    with running_roostd(config(box.url, signup_requires="either", unverified_login="false")) as daemon:
        yield daemon


def sign_up_verified(d, box, email, username=None):
    body = {"email": email, "password": PW}
    if username:
        body["username"] = username
    r = d.call("POST", "/users", body)
    assert r.status == 202 and r.body == {"verificationRequired": True}, r
    mail = box.wait_for(email)[-1]
    r = d.call("POST", "/auth/verify-email", {"email": email, "code": mail.code})
    assert r.status == 200 and r.body == {"verified": True, "email": email.lower()}, r
    r = d.call("POST", "/login", {"email": email, "password": PW})
    assert r.status == 200, r
    return r.body


def test_sign_up_by_email_verify_by_code_then_log_in(d, box):
    r = d.call("POST", "/users", {"email": "Ann@Example.ORG", "password": PW, "firstName": "Ann"})
    assert r.status == 202 and r.body == {"verificationRequired": True}, r
    mail = box.wait_for("ann@example.org")[0]
    assert mail.envelope_from == "noreply@roost.test"
    assert mail.subject == "Verify your email for Watercooler"
    assert mail.code and mail.code in mail.html and mail.link.startswith(d.base + "/auth/verify-email?token=")
    # Not verified yet: the right password is told so, a wrong one is not.
    assert_error(d.call("POST", "/login", {"email": "ann@example.org", "password": PW}), 403, "EmailNotVerified")
    assert_error(d.call("POST", "/login", {"email": "ann@example.org", "password": "wrong password"}), 401)
    # A wrong code, a code for another address, a malformed one.
    wrong = "000000" if mail.code != "000000" else "111111"
    assert_error(d.call("POST", "/auth/verify-email", {"email": "ann@example.org", "code": wrong}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/verify-email", {"email": "nobody@example.org", "code": mail.code}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/verify-email", {"email": "ann@example.org", "code": "12ab56"}), 400)
    r = d.call("POST", "/auth/verify-email", {"email": " ANN@example.org ", "code": mail.code})
    assert r.status == 200 and r.body == {"verified": True, "email": "ann@example.org"}, r
    # Used once: the code and its link are gone.
    assert_error(d.call("POST", "/auth/verify-email", {"email": "ann@example.org", "code": mail.code}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/verify-email", {"token": mail.token}), 400, "InvalidCode")
    r = d.call("POST", "/login", {"email": "ANN@example.org", "password": PW})
    assert r.status == 200, r
    me = d.call("GET", "/users/me", token=r.body["token"]).body
    assert me["email"] == "ann@example.org" and me["emailVerified"] is True and "username" not in me and me["firstName"] == "Ann"
    # The placeholder username of an email-only account names nothing.
    assert_error(d.call("POST", "/login", {"username": "~" + me["_id"], "password": PW}), 401)


def test_verify_by_link_in_a_browser(d, box):
    d.call("POST", "/users", {"email": "link@example.org", "password": PW})
    mail = box.wait_for("link@example.org")[0]
    status, headers, body = d.request("GET", mail.link[len(d.base):])
    assert status == 200 and b"verified" in body and headers["Content-Type"].startswith("text/html"), body
    status, _, body = d.request("GET", mail.link[len(d.base):])
    assert status == 400 and b"already used" in body
    assert d.call("POST", "/login", {"email": "link@example.org", "password": PW}).status == 200


def test_sign_up_with_a_taken_email_answers_the_same_and_mails_the_owner(d, box):
    sign_up_verified(d, box, "owner@example.org")
    before = len(box.to("owner@example.org"))
    r = d.call("POST", "/users", {"email": "OWNER@example.org", "password": "another password"})
    assert r.status == 202 and r.body == {"verificationRequired": True}, r
    notice = box.wait_for("owner@example.org", before + 1)[-1]
    assert notice.subject == "Your Watercooler account" and notice.code is None
    # The owner's password still works, the intruder's does not.
    assert d.call("POST", "/login", {"email": "owner@example.org", "password": PW}).status == 200
    assert_error(d.call("POST", "/login", {"email": "owner@example.org", "password": "another password"}), 401)


def test_sign_up_requirements_and_validation(box):
    cases = {
        "username": [({"email": "a@example.org", "password": PW}, 400), ({"username": "onlyname", "password": PW}, 201)],
        "email": [({"username": "nomail", "password": PW}, 400), ({"email": "e1@example.org", "password": PW}, 201)],
        "both": [({"username": "bothname", "password": PW}, 400), ({"email": "e2@example.org", "password": PW}, 400),
                 ({"username": "bothname", "email": "e3@example.org", "password": PW}, 201)],
    }
    for requires, steps in cases.items():
        with running_roostd(config(box.url, signup_requires=requires)) as d:
            for body, status in steps:
                r = d.call("POST", "/users", body)
                assert r.status == status, (requires, body, r)
            for bad in ["no-at-sign", "two@@example.org", "a@b", "sp ace@example.org", "a@example.org\r\nBcc: x@y.z", "x" * 250 + "@e.org", 42]:
                assert_error(d.call("POST", "/users", {"username": "badmail", "email": bad, "password": PW}), 400)


# Addresses on both sides of the rule (EmailAddress.swift), which openapi.yaml's
# EmailAddress schema must state exactly: the fuzz drill sends what the pattern allows.
ADDRESSES = [
    "ann@example.org", " Ann@Example.ORG\t", "a.b+c!#$%&'*/=?^_`{|}~-@sub-1.example.co", "x" * 64 + "@e.org",
    "a" * 64 + "@" + "b" * 180 + ".org", "1@2.3",
    "no-at-sign", "two@@example.org", "a@b", "sp ace@example.org", "a@example.org\r\nBcc: x@y.z", "a@example.org\n",
    "x" * 65 + "@e.org", "a@.example.org", "a@example.org.", "a@example..org", "@example.org", "\u212a@example.org",
    "\u00e9@example.org", "a@exa_mple.org", " " * 10 + "a@" + "b" * 240 + ".org", "",
]


@functools.cache
def address_schema():
    return yaml.safe_load(SPEC_PATH.read_text())["components"]["schemas"]["EmailAddress"]  # read once: the spec is large


def spec_takes(address):
    schema = address_schema()
    return len(address) <= schema["maxLength"] and re.fullmatch(schema["pattern"], address) is not None


def test_the_spec_states_the_address_rule_exactly(box):
    assert sum(map(spec_takes, ADDRESSES)) == 6  # the table holds both kinds
    with running_roostd(config(box.url)) as fresh:  # its own client counters
        for address in ADDRESSES:
            r = fresh.call("POST", "/auth/verify-email/request", {"email": address})
            if spec_takes(address):
                assert r.status == 202, (address, r)
            else:
                assert_error(r, 400, "InvalidDocument")


# Proof bodies the spec's CodeProof refuses (a code with its email, or a token; never
# both; every member a string): 400 before anything is checked or counted.
PROOFS = [
    ("code and token both", {"token": "t", "code": "123456", "email": "a@example.org"}, "InvalidDocument"),
    ("token a number", {"token": 5}, "InvalidDocument"),
    ("code a number", {"code": 123456, "email": "a@example.org"}, "InvalidDocument"),
    ("email a number beside a token", {"token": "t", "email": 5}, "InvalidDocument"),
    ("email no address beside a token", {"token": "t", "email": "not an address"}, "InvalidDocument"),
    ("code without its email", {"code": "123456"}, "InvalidDocument"),
    ("neither", {"email": "a@example.org"}, "InvalidDocument"),
    ("code of five digits", {"code": "12345", "email": "a@example.org"}, "InvalidCode"),
]


@pytest.mark.parametrize("path", ["/auth/verify-email", "/auth/password-reset"])
@pytest.mark.parametrize("body,error", [(b, e) for _, b, e in PROOFS], ids=[name for name, _, _ in PROOFS])
def test_a_malformed_proof_is_refused(d, path, body, error):
    extra = {"password": "a new long password"} if path.endswith("reset") else {}
    assert_error(d.call("POST", path, {**body, **extra}), 400, error)


def test_a_real_link_token_beside_a_malformed_member_is_not_used(d, box):
    d.call("POST", "/users", {"email": "beside@example.org", "password": PW})
    mail = box.wait_for("beside@example.org")[0]
    for body in ({"token": mail.token, "code": mail.code}, {"token": mail.token, "email": 5}, {"token": mail.token, "email": []}):
        assert_error(d.call("POST", "/auth/verify-email", body), 400, "InvalidDocument")
    assert_error(d.call("POST", "/auth/email-change", {"token": mail.token, "code": mail.code}), 400, "InvalidDocument")
    assert_error(d.call("POST", "/login", {"email": "beside@example.org", "password": PW}), 403, "EmailNotVerified")
    r = d.call("POST", "/auth/verify-email", {"token": mail.token})
    assert r.status == 200 and r.body == {"verified": True, "email": "beside@example.org"}, r


def test_a_reset_link_without_its_token_says_so(d):
    for path in ("/auth/password-reset", "/auth/password-reset?token=", "/auth/verify-email", "/auth/email-change?token="):
        status, headers, page = d.request("GET", path)
        assert status == 400 and headers["Content-Type"].startswith("text/html") and b"incomplete" in page, (path, status)


def test_unverified_login_allowed_gives_a_session_at_sign_up(box):
    with running_roostd(config(box.url)) as d:
        r = d.call("POST", "/users", {"username": "quick", "email": "Quick@Example.org", "password": PW})
        assert r.status == 201 and r.body["user"]["email"] == "quick@example.org" and r.body["user"]["emailVerified"] is False, r
        assert box.wait_for("quick@example.org")[0].code
        assert d.call("POST", "/login", {"email": "quick@example.org", "password": PW}).status == 200
        assert d.call("POST", "/login", {"username": "quick", "password": PW}).status == 200
        # Here a taken address is told (as a taken username is): documented in docs/ACCOUNTS.md.
        assert_error(d.call("POST", "/users", {"username": "other", "email": "QUICK@example.org", "password": PW}), 409)
        # The record's email moves only by the email change.
        t = r.body["token"]
        uid = r.body["user"]["_id"]
        assert_error(d.call("PATCH", f"/users/{uid}", {"emailVerified": True}, token=t), 409, "ImmutableField")
        assert d.call("PATCH", f"/users/{uid}", {"firstName": "Q", "email": "quick@example.org"}, token=t).status == 200
        # Compatible mode: a profile may move its email (as before #38): unverified, mailed, unique, the old address told.
        d.sign_up("holder", email="held@example.org")
        assert_error(d.call("PATCH", f"/users/{uid}", {"email": "HELD@example.org"}, token=t), 409)
        r2 = d.call("PATCH", f"/users/{uid}", {"email": "Else@Example.org"}, token=t)
        assert r2.status == 200 and r2.body["email"] == "else@example.org" and r2.body["emailVerified"] is False, r2
        assert box.wait_for("else@example.org")[0].code
        assert box.wait_for("quick@example.org", 2)[-1].subject == "Your Watercooler email was changed"
        assert d.call("POST", "/login", {"email": "else@example.org", "password": PW}).status == 200


def test_password_reset_by_code_signs_out_every_session(d, box):
    s1 = sign_up_verified(d, box, "reset@example.org", username="resetter")
    # With unverified_login false the address moves only by the email change.
    uid = s1["user"]["_id"]
    assert_error(d.call("PATCH", f"/users/{uid}", {"email": "elsewhere@example.org"}, token=s1["token"]), 409, "ImmutableField")
    assert d.call("PUT", f"/users/{uid}", {**{k: v for k, v in s1["user"].items() if not k.startswith("_")}, "bio": "b"},
                  token=s1["token"]).status == 200
    s2 = d.call("POST", "/login", {"username": "resetter", "password": PW}).body
    r = d.call("POST", "/auth/password-reset/request", {"email": "Reset@example.org"})
    assert r.status == 202 and r.body == {"sent": True}, r
    mail = box.wait_for("reset@example.org", 2)[-1]
    assert mail.subject == "Reset your Watercooler password" and mail.link.startswith(d.base + "/auth/password-reset?token=")
    assert_error(d.call("POST", "/auth/password-reset", {"email": "reset@example.org", "code": mail.code, "password": "short"}), 400)
    r = d.call("POST", "/auth/password-reset", {"email": "reset@example.org", "code": mail.code, "password": "a brand new password"})
    assert r.status == 200 and r.body["token"] and r.body["user"]["email"] == "reset@example.org", r
    for old in (s1["token"], s2["token"]):
        assert d.call("GET", "/users/me", token=old).status == 401
    assert d.call("GET", "/users/me", token=r.body["token"]).status == 200
    assert_error(d.call("POST", "/login", {"email": "reset@example.org", "password": PW}), 401)
    assert d.call("POST", "/login", {"username": "resetter", "password": "a brand new password"}).status == 200
    # Reuse of the code, and of its link, fails.
    assert_error(d.call("POST", "/auth/password-reset", {"email": "reset@example.org", "code": mail.code, "password": "third password"}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/password-reset", {"token": mail.token, "password": "third password"}), 400, "InvalidCode")


def test_reset_by_link_and_a_later_code_invalidates_an_earlier(d, box):
    sign_up_verified(d, box, "later@example.org")
    d.call("POST", "/auth/password-reset/request", {"email": "later@example.org"})
    first = box.wait_for("later@example.org", 2)[-1]
    d.call("POST", "/auth/password-reset/request", {"email": "later@example.org"})
    second = box.wait_for("later@example.org", 3)[-1]
    assert_error(d.call("POST", "/auth/password-reset", {"token": first.token, "password": "from the first mail"}), 400, "InvalidCode")
    # The reset page: a form, nothing used by opening it.
    status, headers, page = d.request("GET", second.link[len(d.base):])
    assert status == 200 and b"<form" in page and second.token.encode() in page
    r = d.call("POST", "/auth/password-reset", {"token": second.token, "password": "from the second mail"})
    assert r.status == 200, r
    assert_error(d.call("POST", "/auth/password-reset", {"token": second.token, "password": "once more please"}), 400, "InvalidCode")
    assert d.call("POST", "/login", {"email": "later@example.org", "password": "from the second mail"}).status == 200


def test_code_guessing_kills_the_code_and_is_throttled(d, box):
    sign_up_verified(d, box, "guess@example.org")
    d.call("POST", "/auth/password-reset/request", {"email": "guess@example.org"})
    mail = box.wait_for("guess@example.org", 2)[-1]
    wrong = iter(c for c in ("%06d" % (111111 * i % 1000000) for i in range(10)) if c != mail.code)
    checked, throttled = 0, 0
    while checked < 5:  # five wrong codes checked, waiting out the throttle's blocks
        r = d.call("POST", "/auth/password-reset", {"email": "guess@example.org", "code": next(wrong), "password": "guessed password"})
        if r.status == 429:
            throttled += 1
            time.sleep(int(r.headers["retry-after"]) + 0.1)
        else:
            assert_error(r, 400, "InvalidCode")
            checked += 1
    # The fifth wrong code in 15 minutes blocked the address: even the right code waits.
    r = d.call("POST", "/auth/password-reset", {"email": "guess@example.org", "code": mail.code, "password": "guessed password"})
    assert_error(r, 429, "TooManyAttempts")
    time.sleep(int(r.headers["retry-after"]) + 0.1)
    # The code died at its fifth wrong try: right now, it still fails.
    r = d.call("POST", "/auth/password-reset", {"email": "guess@example.org", "code": mail.code, "password": "guessed password"})
    assert_error(r, 400, "InvalidCode")
    assert d.call("POST", "/login", {"email": "guess@example.org", "password": PW}).status == 200


def test_expired_code_fails(box):
    with running_roostd(config(box.url, account_code_lifetime=1)) as d:
        d.call("POST", "/users", {"username": "expiring", "email": "exp@example.org", "password": PW})
        mail = box.wait_for("exp@example.org")[0]
        time.sleep(2.2)
        assert_error(d.call("POST", "/auth/verify-email", {"email": "exp@example.org", "code": mail.code}), 400, "InvalidCode")
        assert_error(d.call("POST", "/auth/verify-email", {"token": mail.token}), 400, "InvalidCode")


def test_requests_answer_the_same_for_known_and_unknown_addresses(d, box):
    sign_up_verified(d, box, "known@example.org")
    sent_before = len(box.to("known@example.org"))
    for path in ("/auth/password-reset/request", "/auth/verify-email/request"):
        known = d.call("POST", path, {"email": "known@example.org"})
        unknown = d.call("POST", path, {"email": "unknown@example.org"})
        assert (known.status, known.body) == (unknown.status, unknown.body) == (202, {"sent": True})
    # Only the reset reached the known (verified) address; nothing went to the unknown one.
    assert len(box.wait_for("known@example.org", sent_before + 1)) == sent_before + 1
    time.sleep(0.5)
    assert box.to("unknown@example.org") == []
    # The throttle counts unknown addresses as it counts known ones: the same 429 at the same step.
    for email in ("known2@example.org", "unknown2@example.org"):
        if email.startswith("known"):
            sign_up_verified(d, box, email)
        statuses = [d.call("POST", "/auth/password-reset/request", {"email": email}).status for _ in range(4)]
        assert statuses == [202, 202, 202, 429], (email, statuses)


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


@pytest.fixture
def d_interactive(box):
    """As `d`, at the default cost (`interactive`), so a hash takes hundreds of milliseconds
    (at `owasp`, tens: the machine's noise would be as large as the difference tested)."""
    with running_roostd(config(box.url, signup_requires="either", unverified_login="false",
                               password_cost="interactive")) as daemon:
        yield daemon


@pytest.mark.serial  # it measures time: run in the serial part, not beside a parallel worker's load
def test_no_enumeration_by_timing(d_interactive, box):
    """Known and unknown addresses take the same time (log-ins, code requests): measured
    in interleaved pairs, a known address's log-in then an unknown one's, and compared by the
    median of the pairs' differences, so a disturbance of the shared machine (a test suite
    beside it in CI) falls on both sides of a pair alike. A log-in for an unknown address
    that skipped the password hash would answer in a few milliseconds against the hash's
    hundreds: every pair's difference would be the whole hash, far outside the tolerance."""
    d = d_interactive
    # Three known accounts, four wrong passwords each: under the pair throttle's five, so every one is hashed.
    names = ("timing", "timing2", "timing3")
    for name in names:
        sign_up_verified(d, box, f"{name}@example.org")
    known, unknown = [], []
    for i in range(12):
        email = f"{names[i % 3]}@example.org"
        t, r = timed(lambda: d.call("POST", "/login", {"email": email, "password": "wrong password!"}))
        assert r.status == 401
        known.append(t)
        t, r = timed(lambda: d.call("POST", "/login", {"email": f"nobody-t{i}@example.org", "password": "wrong password!"}))
        assert r.status == 401
        unknown.append(t)
    difference = statistics.median(k - u for k, u in zip(known, unknown))
    typical = statistics.median(known + unknown)
    assert abs(difference) < max(0.03, 0.3 * typical), (difference, typical, known, unknown)
    known, unknown = [], []
    for i in range(4):
        email = "timing@example.org" if i % 2 else "timing2@example.org"
        known.append(timed(lambda: d.call("POST", "/auth/verify-email/request", {"email": email}))[0])
        unknown.append(timed(lambda: d.call("POST", "/auth/verify-email/request", {"email": f"nobody-v{i}@example.org"}))[0])
    assert abs(min(known) - min(unknown)) < 0.02, (known, unknown)


def test_email_change_needs_the_password_and_a_code_to_the_new_address(d, box):
    s = sign_up_verified(d, box, "mover@example.org")
    t, uid = s["token"], s["user"]["_id"]
    assert_error(d.call("POST", "/auth/email-change/request", {"email": "moved@example.org"}, token=t), 403)
    assert_error(d.call("POST", "/auth/email-change/request", {"email": "moved@example.org", "password": "not the password"}, token=t), 401)
    assert_error(d.call("POST", "/auth/email-change/request", {"email": "moved@example.org", "password": PW}), 401)
    # Members of the wrong type are refused before the password is checked, never read as absent.
    for body in ({"email": "moved@example.org", "password": 5}, {"email": "moved@example.org", "password": PW, "twoFactorCode": 123456},
                 {"email": ["moved@example.org"], "password": PW}):
        assert_error(d.call("POST", "/auth/email-change/request", body, token=t), 400, "InvalidDocument")
    r = d.call("POST", "/auth/email-change/request", {"email": "Moved@example.org", "password": PW}, token=t)
    assert r.status == 202, r
    mail = box.wait_for("moved@example.org")[0]
    assert mail.subject == "Confirm your new email for Watercooler"
    # A code needs the signed-in account; another account's session cannot use it.
    other = sign_up_verified(d, box, "bystander@example.org")
    assert_error(d.call("POST", "/auth/email-change", {"code": mail.code}, token=other["token"]), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/email-change", {"code": mail.code}), 401)
    r = d.call("POST", "/auth/email-change", {"code": mail.code}, token=t)
    assert r.status == 200 and r.body == {"email": "moved@example.org", "emailVerified": True}, r
    notice = box.wait_for("mover@example.org", 2)[-1]
    assert notice.subject == "Your Watercooler email was changed" and "moved@example.org" in notice.text
    me = d.call("GET", "/users/me", token=t).body
    assert me["email"] == "moved@example.org" and me["emailVerified"] is True
    assert d.call("POST", "/login", {"email": "moved@example.org", "password": PW}).status == 200
    assert_error(d.call("POST", "/login", {"email": "mover@example.org", "password": PW}), 401)
    # Moving to a taken address: the same 202, the owner is told, no code exists.
    r = d.call("POST", "/auth/email-change/request", {"email": "bystander@example.org", "password": PW}, token=t)
    assert r.status == 202, r
    assert box.wait_for("bystander@example.org", 2)[-1].subject == "Your Watercooler account"


def test_email_change_by_link(d, box):
    s = sign_up_verified(d, box, "linkmove@example.org")
    assert d.call("POST", "/auth/email-change/request", {"email": "linkmoved@example.org", "password": PW}, token=s["token"]).status == 202
    mail = box.wait_for("linkmoved@example.org")[0]
    status, _, body = d.request("GET", mail.link[len(d.base):])
    assert status == 200 and b"confirmed" in body, body
    assert d.call("POST", "/login", {"email": "linkmoved@example.org", "password": PW}).status == 200


def test_deleting_the_account_frees_its_email(d, box):
    s = sign_up_verified(d, box, "leaver@example.org")
    assert d.call("DELETE", f"/users/{s['user']['_id']}", token=s["token"]).status == 200
    r = d.call("POST", "/users", {"email": "leaver@example.org", "password": "new owner password"})
    assert r.status == 202
    mail = box.wait_for("leaver@example.org", 2)[-1]
    assert mail.subject.startswith("Verify"), mail.subject


def test_a_down_mail_server_delays_mail_and_never_slows_a_request():
    box = MailBox()  # not started yet: nothing listens on its port
    with running_roostd(config(box.url, signup_requires="email")) as d:
        t = time.perf_counter()
        r = d.call("POST", "/users", {"email": "patient@example.org", "password": PW})
        assert r.status == 201 and time.perf_counter() - t < 10, r  # an Argon2 hash on a busy machine; no SMTP wait
        deadline = time.monotonic() + 15
        while "mail not sent; will retry" not in d.log_text():
            assert time.monotonic() < deadline, d.log_text()[-2000:]
            time.sleep(0.1)
        assert box.mails == []
        box.start()
        try:
            mail = box.wait_for("patient@example.org", timeout=30)[0]  # the first retry comes after 5 s (±20 %)
            assert mail.code
            # The SMTP server has the mail before the sender counts it (the count follows the send): wait for it.
            deadline = time.monotonic() + 10
            while True:
                metrics = d.call("GET", "/metrics", token="roost-test-admin-token-0123456789abcdef").raw.decode()
                if 'roost_mail_deliveries_total{outcome="sent"} 1' in metrics or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert 'roost_mail_deliveries_total{outcome="sent"} 1' in metrics
            assert 'roost_mail_deliveries_total{outcome="failed"}' in metrics
        finally:
            box.stop()


def test_the_sender_keeps_its_connection_between_mails(d, box):
    """Mails sent one after another share one SMTP connection (no handshake per mail); each still arrives whole."""
    before = len(box.peers)
    for i in range(6):
        r = d.call("POST", "/users", {"email": f"batch{i}@example.org", "password": PW})
        assert r.status in (201, 202), r
        box.wait_for(f"batch{i}@example.org")
    peers = box.peers[before:]
    assert len(peers) == 6 and len(set(peers)) < 6, peers


def test_a_kept_connection_the_server_closed_costs_no_retry_delay(d, box):
    """The server restarted (closing the kept connection): the next mail goes at once on a new one, not 5 s later."""
    assert d.call("POST", "/users", {"email": "first@example.org", "password": PW}).status in (201, 202)
    box.wait_for("first@example.org")
    box.stop()
    box.start()
    assert d.call("POST", "/users", {"email": "second@example.org", "password": PW}).status in (201, 202)
    box.wait_for("second@example.org", timeout=3)  # the retry schedule's first step is 5 s


def test_a_mail_server_that_never_answers_holds_no_request():
    """A server that accepts and never speaks keeps the sender waiting its smtp_timeout; requests never wait for it."""
    import socket
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)  # never accepted, never answered
    try:
        with running_roostd(config(f"smtp://127.0.0.1:{hole.getsockname()[1]}", signup_requires="email", smtp_timeout=60)) as d:
            for i in range(3):
                t = time.perf_counter()
                r = d.call("POST", "/auth/verify-email/request", {"email": f"hole{i}@example.org"})
                assert r.status == 202 and time.perf_counter() - t < 5, r
                t = time.perf_counter()
                r = d.call("POST", "/users", {"email": f"hole{i}@example.org", "password": PW})
                assert r.status == 201 and time.perf_counter() - t < 20, r  # well under the 60 s an SMTP wait would take
            t = time.perf_counter()
            assert d.call("GET", "/healthz").status == 200 and time.perf_counter() - t < 1
    finally:
        hole.close()


def test_mail_survives_a_restart(box):
    """Queued while the server is unset, sent after a restart that sets it: nothing is lost."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Roostd(tmp, config("", signup_requires="email")).start()
        try:
            assert d.call("POST", "/users", {"email": "durable@example.org", "password": PW}).status == 201
        finally:
            d.stop()
        d.config_path.write_text(config(box.url, signup_requires="email"))
        d.start()
        try:
            assert box.wait_for("durable@example.org")[0].code
        finally:
            d.stop()


def test_operator_templates_and_smtp_auth(tmp_path):
    (tmp_path / "verify_email.txt").write_text("Subject: Willkommen bei {{app_name}} ✓\n\nDein Code: {{code}}\n{{link}}\n")
    (tmp_path / "verify_email.html").write_text("<p>Code <b>{{code}}</b> für {{email}}</p>")
    (tmp_path / "smtp-password").write_text("s3cret-pass\n")
    box = MailBox(credentials=("roost", "s3cret-pass")).start()
    try:
        cfg = config(box.url, signup_requires="email", mail_templates_dir=str(tmp_path), smtp_username="roost",
                     smtp_password_file=str(tmp_path / "smtp-password"), public_url="https://app.example.org/")
        with running_roostd(cfg) as d:
            assert d.call("POST", "/users", {"email": "de@example.org", "password": PW}).status == 201
            mail = box.wait_for("de@example.org")[0]
            assert mail.subject == "Willkommen bei Watercooler ✓"
            assert mail.text.startswith("Dein Code: ") and mail.code
            assert mail.link.startswith("https://app.example.org/auth/verify-email?token=")
            assert f"<b>{mail.code}</b> für de@example.org" in mail.html
            assert box.auth_users == ["roost"]
            assert "s3cret-pass" not in d.log_text()
    finally:
        box.stop()
