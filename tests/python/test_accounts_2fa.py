"""Two-factor with TOTP (RFC 6238, issue #38): set up with the password, on
with a first code (recovery codes answered once), enforced at log-in (a
ticket, then a code), for ID-token sign-in and password resets too, and for
sensitive changes (password, email, turning it off); codes work once; the
admin resets it. Both engines."""

import base64
import hashlib
import hmac
import struct
import time

import pytest

from roost_harness import ADMIN_TOKEN, assert_error, running_roostd
from mail_support import MailBox, config
from oidc_support import Issuer

PW = "correct horse battery"


def totp(secret, at=None, step_offset=0):
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int((at or time.time()) // 30) + step_offset
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    o = mac[19] & 15
    return "%06d" % ((struct.unpack(">I", mac[o:o + 4])[0] & 0x7FFFFFFF) % 1000000)


@pytest.fixture(scope="module")
def world():
    acme, box = Issuer(), MailBox().start()
    cfg = config(box.url, signup_requires="either") + (
        f"oidc_providers:\n  acme: {{discovery_url: '{acme.url}/.well-known/openid-configuration', client_ids: [com.example.app]}}\n")
    with running_roostd(cfg) as d:
        yield d, acme, box
    acme.stop()
    box.stop()


def enable(d, token):
    assert_error(d.call("POST", "/auth/2fa/setup", {}, token=token), 403)
    assert_error(d.call("POST", "/auth/2fa/setup", {"password": "wrong password!"}, token=token), 401)
    r = d.call("POST", "/auth/2fa/setup", {"password": PW}, token=token)
    assert r.status == 200 and r.body["otpauthURI"].startswith("otpauth://totp/Watercooler:") and "secret=" + r.body["secret"] in r.body["otpauthURI"], r
    secret = r.body["secret"]
    assert_error(d.call("POST", "/auth/2fa/enable", {"code": "000000" if totp(secret) != "000000" else "111111"}, token=token), 400, "InvalidCode")
    r = d.call("POST", "/auth/2fa/enable", {"code": totp(secret)}, token=token)
    assert r.status == 200 and r.body["enabled"] is True and len(r.body["recoveryCodes"]) == 10, r
    return secret, r.body["recoveryCodes"]


def wait_next_step():
    time.sleep(30 - time.time() % 30 + 0.2)


def test_log_in_needs_the_second_factor_and_a_code_works_once(world):
    d, _, _ = world
    s = d.sign_up("tina", email="tina@example.org")
    secret, recovery = enable(d, s["token"])
    r = d.call("POST", "/login", {"username": "tina", "password": PW})
    assert r.status == 202 and r.body["twoFactorRequired"] is True and "token" not in r.body, r
    ticket = r.body["ticket"]
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": "123456" if totp(secret, step_offset=5) != "123456" else "654321"}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": "made-up", "code": totp(secret)}), 400, "InvalidCode")
    # The code that enabled it was used: the same step's code fails; the next step's works
    # (a step after is accepted for clock drift, so nothing waits for the clock).
    r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret)})
    assert_error(r, 400, "InvalidCode")
    r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)})
    if r.status != 200:  # the clock passed a step boundary since enable: two steps ahead is too far
        wait_next_step()
        r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)})
    assert r.status == 200 and r.body["token"] and r.body["user"]["username"] == "tina", r
    used = totp(secret, step_offset=1)
    # The ticket is used; the code is used, and so is every earlier step's.
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": used}), 400)
    t2 = d.call("POST", "/login", {"email": "tina@example.org", "password": PW}).body["ticket"]
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": t2, "code": used}), 400, "InvalidCode")
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": t2, "code": totp(secret)}), 400, "InvalidCode")
    # A recovery code works once (in any case, with or without its dash).
    r = d.call("POST", "/auth/2fa/verify", {"ticket": t2, "code": recovery[0].lower().replace("-", "")})
    assert r.status == 200, r
    t3 = d.call("POST", "/login", {"username": "tina", "password": PW}).body["ticket"]
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": t3, "code": recovery[0]}), 400, "InvalidCode")
    assert d.call("POST", "/auth/2fa/verify", {"ticket": t3, "code": recovery[1]}).status == 200


def test_sensitive_changes_need_a_code(world):
    d, _, box = world
    s = d.sign_up("uma", email="uma@example.org")
    t, uid = s["token"], s["user"]["_id"]
    secret, recovery = enable(d, t)
    change = {"password": "a brand new password", "oldPassword": PW}
    assert_error(d.call("PATCH", f"/users/{uid}", change, token=t), 403, "TwoFactorRequired")
    r = d.call("PATCH", f"/users/{uid}", {**change, "twoFactorCode": recovery[0]}, token=t)
    assert r.status == 200 and "twoFactorCode" not in r.body, r
    assert_error(d.call("POST", "/auth/email-change/request", {"email": "uma2@example.org", "password": "a brand new password"}, token=t),
                 403, "TwoFactorRequired")
    assert d.call("POST", "/auth/email-change/request", {"email": "uma2@example.org", "password": "a brand new password",
                                                          "twoFactorCode": recovery[1]}, token=t).status == 202
    # Turning it off needs the password and a code.
    assert_error(d.call("POST", "/auth/2fa/disable", {"password": "a brand new password"}, token=t), 403, "TwoFactorRequired")
    assert d.call("POST", "/auth/2fa/disable", {"password": "a brand new password", "twoFactorCode": recovery[2]}, token=t).status == 200
    r = d.call("POST", "/login", {"username": "uma", "password": "a brand new password"})
    assert r.status == 200 and r.body["token"], r


def test_reset_and_id_token_sign_in_need_the_second_factor_too(world):
    d, acme, box = world
    s = d.sign_up("vic", email="vic@example.org")
    secret, recovery = enable(d, s["token"])
    d.call("POST", "/auth/password-reset/request", {"email": "vic@example.org"})
    mail = [m for m in box.wait_for("vic@example.org", 2) if m.subject.startswith("Reset")][-1]
    r = d.call("POST", "/auth/password-reset", {"email": "vic@example.org", "code": mail.code, "password": "reset password here"})
    assert r.status == 202 and r.body["twoFactorRequired"] is True, r
    assert d.call("POST", "/auth/2fa/verify", {"ticket": r.body["ticket"], "code": recovery[0]}).status == 200
    link = d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": acme.token(sub="vic-acme"), "nonce": "raw-nonce"},
                  token=d.call("POST", "/auth/2fa/verify", {"ticket": d.call("POST", "/login", {"username": "vic", "password": "reset password here"}).body["ticket"],
                                                           "code": recovery[1]}).body["token"])
    assert link.status == 200, link
    r = d.call("POST", "/auth/idtoken", {"provider": "acme", "id_token": acme.token(sub="vic-acme"), "nonce": "raw-nonce"})
    assert r.status == 202 and r.body["twoFactorRequired"] is True, r


def test_code_guessing_is_throttled_and_kills_the_ticket(world):
    d, _, _ = world
    s = d.sign_up("wes")
    secret, _ = enable(d, s["token"])
    ticket = d.call("POST", "/login", {"username": "wes", "password": PW}).body["ticket"]
    wrong = [c for c in ("%06d" % (i * 111111) for i in range(9)) if c not in {totp(secret, step_offset=k) for k in (-1, 0, 1, 2)}]
    statuses = [d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": c}).status for c in wrong[:5]]
    assert statuses == [400] * 5, statuses
    # The ticket died at its fifth wrong code: even the right code fails with it.
    assert_error(d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)}), 400, "InvalidCode")
    # A new log-in's ticket: the account's counter is past its limit, so the next wrong code blocks (429)...
    ticket = d.call("POST", "/login", {"username": "wes", "password": PW}).body["ticket"]
    r1 = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": wrong[5]})
    r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)})
    assert 429 in (r1.status, r.status), (r1, r)
    if r.status != 429:
        r = r1
    assert_error(r, 429, "TooManyAttempts")
    time.sleep(int(r.headers["retry-after"]) + 0.1)
    # ...and after the block the right code works (the next step's: this one's enabled it).
    r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)})
    if r.status != 200:  # the clock passed a step boundary during the block: two steps ahead is too far
        wait_next_step()
        r = d.call("POST", "/auth/2fa/verify", {"ticket": ticket, "code": totp(secret, step_offset=1)})
    assert r.status == 200, r


def test_admin_resets_two_factor(world):
    d, _, _ = world
    s = d.sign_up("xia")
    enable(d, s["token"])
    assert d.call("POST", "/login", {"username": "xia", "password": PW}).status == 202
    assert_error(d.call("DELETE", f"/users/{s['user']['_id']}/2fa", token=s["token"]), 403)
    assert_error(d.call("DELETE", f"/users/{s['user']['_id']}/2fa"), 401, "Unauthorized")  # no credentials: 401, not 403
    assert d.call("GET", "/auth/account", token=s["token"]).body["twoFactor"] is True
    assert d.call("DELETE", f"/users/{s['user']['_id']}/2fa", token=ADMIN_TOKEN).status == 200
    assert d.call("GET", "/auth/account", token=s["token"]).body["twoFactor"] is False
    r = d.call("POST", "/login", {"username": "xia", "password": PW})
    assert r.status == 200 and r.body["token"], r


# Two-factor bodies with a member of the wrong type: 400 InvalidDocument, never read as
# absent (a wrong-typed password is no "password missing" 403, a wrong-typed code no
# "code missing" TwoFactorRequired).
WRONG_TYPED = [
    ("/auth/2fa/setup", {"password": 5}),
    ("/auth/2fa/enable", {"code": 123456}),
    ("/auth/2fa/disable", {"password": PW, "twoFactorCode": 123456}),
    ("/auth/2fa/disable", {"password": [PW], "twoFactorCode": "123456"}),
    ("/auth/2fa/verify", {"ticket": 5, "code": "123456"}),
    ("/auth/2fa/verify", {"ticket": "a ticket", "code": 123456}),
    ("/auth/2fa/verify", {"ticket": None, "code": "123456"}),
]


def test_wrong_typed_members_are_refused(world):
    d, _, _ = world
    s = d.sign_up("yan")
    enable(d, s["token"])
    for path, body in WRONG_TYPED:
        assert_error(d.call("POST", path, body, token=s["token"]), 400, "InvalidDocument")
    # Nothing changed: two-factor is still on, and the log-in still asks for a code.
    assert d.call("GET", "/auth/account", token=s["token"]).body["twoFactor"] is True
    assert d.call("POST", "/login", {"username": "yan", "password": PW}).status == 202
