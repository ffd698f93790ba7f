"""Guest accounts (issue #38): POST /auth/anonymous gives an account with no
credentials; adding a username/email and password, or linking a provider,
keeps its _id, documents and files; guests unused for anonymous_max_idle are
removed through the account removal of DELETE /users/:id. Both engines."""

import time

import pytest

from roost_harness import ADMIN_TOKEN, assert_error, png, running_roostd
from mail_support import MailBox, config
from oidc_support import Issuer

PW = "correct horse battery"


@pytest.fixture(scope="module")
def world():
    acme, box = Issuer(), MailBox().start()
    cfg = config(box.url, anonymous_accounts="true", files_permission="private", signup_requires="either") + (
        f"oidc_providers:\n  acme: {{discovery_url: '{acme.url}/.well-known/openid-configuration', client_ids: [com.example.app]}}\n")
    with running_roostd(cfg) as d:
        yield d, acme, box
    acme.stop()
    box.stop()


def guest(d):
    r = d.call("POST", "/auth/anonymous")
    assert r.status == 201 and r.body["user"]["anonymous"] is True and "username" not in r.body["user"], r
    return r.body["user"]["_id"], r.body["token"]


def test_off_unless_configured(box=None):
    with running_roostd(config("")) as d:
        assert_error(d.call("POST", "/auth/anonymous"), 403, "Forbidden")


def test_upgrade_keeps_id_documents_and_files(world):
    d, _, _ = world
    gid, t = guest(d)
    note = d.call("POST", "/notes", {"text": "guest note"}, token=t)
    assert note.status == 201, note
    f = d.call("POST", "/files", raw_body=png(8, 8, 1), headers={"Content-Type": "image/png", "Authorization": f"Bearer {t}"})
    assert f.status == 201, f
    # A guest has nothing to log in with.
    assert_error(d.call("POST", "/login", {"username": "~" + gid, "password": ""}), 401)
    assert_error(d.call("POST", "/auth/anonymous/upgrade", {"username": "ab", "password": PW}, token=t), 400)
    d.sign_up("takenname")
    assert_error(d.call("POST", "/auth/anonymous/upgrade", {"username": "takenname", "password": PW}, token=t), 409)
    r = d.call("POST", "/auth/anonymous/upgrade", {"username": "formerguest", "password": PW}, token=t)
    assert r.status == 200 and r.body["user"]["_id"] == gid and r.body["user"]["username"] == "formerguest", r
    assert "anonymous" not in r.body["user"]
    # Same session still works; a fresh log-in finds the same account, its note and its file.
    assert d.call("GET", "/users/me", token=t).body["_id"] == gid
    s = d.call("POST", "/login", {"username": "formerguest", "password": PW}).body
    assert s["user"]["_id"] == gid
    got = d.call("GET", f"/notes/{note.body['_id']}", token=s["token"])
    assert got.status == 200 and got.body["_acl"]["creator"] == gid
    assert d.call("GET", f"/files/{f.body['_id']}/meta", token=s["token"]).status == 200
    # Only a guest upgrades.
    assert_error(d.call("POST", "/auth/anonymous/upgrade", {"username": "again", "password": PW}, token=s["token"]), 409)
    assert_error(d.call("POST", "/auth/anonymous/upgrade", {"username": "nobody", "password": PW}), 401)


def test_upgrade_by_email_mails_a_verification(world):
    d, _, box = world
    gid, t = guest(d)
    r = d.call("POST", "/auth/anonymous/upgrade", {"email": "Guest@Example.org", "password": PW}, token=t)
    assert r.status == 200 and r.body["user"]["email"] == "guest@example.org" and r.body["user"]["emailVerified"] is False, r
    assert box.wait_for("guest@example.org")[0].code
    assert d.call("POST", "/login", {"email": "guest@example.org", "password": PW}).body["user"]["_id"] == gid


def test_linking_a_provider_upgrades_a_guest(world):
    d, acme, _ = world
    gid, t = guest(d)
    r = d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": acme.token(sub="guest-sub"), "nonce": "raw-nonce"}, token=t)
    assert r.status == 200, r
    assert "anonymous" not in d.call("GET", "/users/me", token=t).body
    r = d.call("POST", "/auth/idtoken", {"provider": "acme", "id_token": acme.token(sub="guest-sub"), "nonce": "raw-nonce"})
    assert r.status == 200 and r.body["user"]["_id"] == gid


def test_idle_guests_are_removed_through_the_write_path(tmp_path):
    with running_roostd(config("", anonymous_accounts="true", anonymous_max_idle=3)) as d:
        stale, stale_token = guest(d)
        # The cursor right after the guest is made: under load the calls below may take
        # longer than anonymous_max_idle, and the guest may go before they are done.
        before = d.call("GET", "/users/_deltaset", token=ADMIN_TOKEN).body
        kept, kept_token = guest(d)
        assert d.call("POST", "/auth/anonymous/upgrade", {"username": "keeper", "password": PW}, token=kept_token).status == 200
        member = d.sign_up("member")
        deadline = time.monotonic() + 15
        while d.call("GET", f"/users/{stale}", token=ADMIN_TOKEN).status != 404:
            assert time.monotonic() < deadline, d.log_text()[-2000:]
            time.sleep(0.3)
        assert_error(d.call("GET", "/users/me", token=stale_token), 401)
        assert d.call("GET", f"/users/{kept}", token=ADMIN_TOKEN).status == 200
        assert d.call("GET", "/users/me", token=member["token"]).status == 200
        # The removal went through the write path: the users feed has its deletion.
        after = d.call("GET", f"/users/_deltaset?since={before['cursor']}", token=ADMIN_TOKEN)
        assert after.status == 200 and {"_id": stale} in after.body["deleted"], after
        assert {"_id": kept} not in after.body["deleted"]
        assert "removed idle guest accounts" in d.log_text()
