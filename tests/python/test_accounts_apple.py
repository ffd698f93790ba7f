"""Sign in with Apple token revocation (issue #38, App Store guideline
5.1.1(v)): the `authorization_code` an app sends with its Apple ID token is
exchanged at Apple's `/auth/token` (client_secret an ES256 JWT signed with the
team key), the refresh token is kept with the identity and never shown, and it
is revoked at `/auth/revoke` when the account is deleted or Apple is unlinked.
Both calls run after the answers from `_account_jobs`: a stand-in that is down
delays revocation (retried), never the deletion. Both engines."""

import re
import secrets
import tempfile
import time
from pathlib import Path

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, assert_error, engine
from apple_support import KEY_ID, TEAM_ID, AppleTokens
from oidc_support import Issuer

PW = "correct horse battery"


def cfg(issuer, tokens, key_file):
    return (f"password_cost: owasp\nadmin_token: {ADMIN}\n"
            "oidc_providers:\n"
            f"  apple: {{issuer: '{issuer.url}', jwks_url: '{issuer.url}/jwks', client_ids: [com.example.app, com.example.web],\n"
            f"           team_id: {TEAM_ID}, key_id: {KEY_ID}, private_key_file: '{key_file}', token_endpoint: '{tokens.url}'}}\n")


@pytest.fixture(scope="module")
def world():
    issuer, tokens = Issuer(), AppleTokens(client_ids=("com.example.app", "com.example.web"))
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "siwa.p8"
        key.write_text(tokens.p8)
        d = Roostd(Path(tmp) / "d", cfg(issuer, tokens, key)).start()
        try:
            yield d, issuer, tokens
        finally:
            d.stop()
            issuer.stop()
            tokens.stop()


def sign_in(d, issuer, sub, code=None, aud="com.example.app"):
    body = {"provider": "apple", "id_token": issuer.token(sub=sub, aud=aud), "nonce": "raw-nonce"}
    if code is not None:
        body["authorization_code"] = code
    return d.call("POST", "/auth/idtoken", body)


def wait_until(check, d, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, d.log_tail(30)
        time.sleep(0.1)


def exchanged(tokens, before):
    return lambda: len(tokens.refresh_tokens) > before


def test_deleting_the_account_revokes_the_exchanged_token(world):
    d, issuer, tokens = world
    before = len(tokens.refresh_tokens)
    r = sign_in(d, issuer, "apple-del", code=tokens.issue_code("com.example.web"), aud="com.example.web")
    assert r.status == 201, r
    uid, token = r.body["user"]["_id"], r.body["token"]
    wait_until(exchanged(tokens, before), d)
    refresh = list(tokens.refresh_tokens)[-1]
    assert tokens.refresh_tokens[refresh] == "com.example.web"  # the token's audience is the client id
    # Never shown: not in the account, the user record or the log.
    for path in ("/auth/account", "/users/me"):
        assert refresh not in d.call("GET", path, token=token).raw.decode()
    assert refresh not in d.log_text()
    assert d.call("DELETE", f"/users/{uid}", token=token).status == 200
    wait_until(lambda: refresh in tokens.revoked, d)
    assert refresh not in d.log_text()


def test_unlinking_apple_revokes_and_a_code_works_once(world):
    d, issuer, tokens = world
    member = d.sign_up("applelinker")
    code = tokens.issue_code()
    before = len(tokens.refresh_tokens)
    body = {"provider": "apple", "id_token": issuer.token(sub="apple-link"), "nonce": "raw-nonce", "authorization_code": code}
    assert d.call("POST", "/auth/idtoken/link", body, token=member["token"]).status == 200
    wait_until(exchanged(tokens, before), d)
    refresh = list(tokens.refresh_tokens)[-1]
    # The same code again (a replayed request with a fresh ID token): Apple refuses it, nothing new is kept.
    refused = len(tokens.refusals)
    assert sign_in(d, issuer, "apple-link", code=code).status == 200
    wait_until(lambda: len(tokens.refusals) > refused, d)
    assert tokens.refusals[-1] == ("/auth/token", "unknown or used code")
    assert d.call("DELETE", "/auth/idtoken/link/apple", token=member["token"]).status == 200
    wait_until(lambda: refresh in tokens.revoked, d)


def test_a_bad_code_is_given_up_and_logged_without_blocking_anything(world):
    d, issuer, tokens = world
    refused = len(tokens.refusals)
    r = sign_in(d, issuer, "apple-bad", code="c-made-up")
    assert r.status == 201, r
    wait_until(lambda: len(tokens.refusals) > refused, d)
    wait_until(lambda: re.search(r'roost_account_jobs_total\{kind="apple_exchange",outcome="gave_up"\} [1-9]',
                                 d.call("GET", "/metrics", token=ADMIN).raw.decode()), d)
    assert "account job given up" in d.log_text() and "c-made-up" not in d.log_text()
    revoked = len(tokens.revoked)
    assert d.call("DELETE", f"/users/{r.body['user']['_id']}", token=r.body["token"]).status == 200
    time.sleep(1.5)
    assert len(tokens.revoked) == revoked  # nothing kept, nothing to revoke


def test_apple_down_delays_revocation_and_never_the_deletion(world):
    d, issuer, tokens = world
    before = len(tokens.refresh_tokens)
    r = sign_in(d, issuer, "apple-down", code=tokens.issue_code())
    uid, token = r.body["user"]["_id"], r.body["token"]
    wait_until(exchanged(tokens, before), d)
    refresh = list(tokens.refresh_tokens)[-1]
    tokens.fail_next = 1
    started = time.monotonic()
    assert d.call("DELETE", f"/users/{uid}", token=token).status == 200
    assert time.monotonic() - started < 2
    assert_error(d.call("GET", "/users/me", token=token), 401)
    wait_until(lambda: tokens.fail_next == 0, d)
    assert refresh not in tokens.revoked
    wait_until(lambda: refresh in tokens.revoked, d, timeout=30)  # the retry, ~5 s later
    assert "account job failed; will retry" in d.log_text()


@pytest.mark.parametrize("code", [123, "", "x" * 3000])
def test_a_malformed_code_is_refused(world, code):
    d, issuer, _ = world
    assert_error(sign_in(d, issuer, "apple-malformed", code=code), 400)


def test_without_token_settings_the_code_is_ignored():
    issuer, tokens = Issuer(), AppleTokens()
    conf = (f"password_cost: owasp\nadmin_token: {ADMIN}\noidc_providers:\n"
            f"  apple: {{issuer: '{issuer.url}', jwks_url: '{issuer.url}/jwks', client_ids: [com.example.app]}}\n")
    with tempfile.TemporaryDirectory() as tmp:
        d = Roostd(tmp, conf).start()
        try:
            r = sign_in(d, issuer, "apple-plain", code=tokens.issue_code())
            assert r.status == 201, r
            assert d.call("DELETE", f"/users/{r.body['user']['_id']}", token=r.body["token"]).status == 200
            time.sleep(1.5)
            assert tokens.refresh_tokens == {} and tokens.refusals == []
        finally:
            d.stop()
            issuer.stop()
            tokens.stop()


def test_with_a_token_key_the_refresh_token_is_kept_sealed():
    issuer, tokens = Issuer(), AppleTokens()
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "siwa.p8"
        key.write_text(tokens.p8)
        sealing = Path(tmp) / "token.key"
        sealing.write_text(secrets.token_hex(32) + "\n")
        conf = cfg(issuer, tokens, key).replace("token_endpoint:", f"token_key_file: '{sealing}', token_endpoint:")
        d = Roostd(Path(tmp) / "d", conf).start()
        try:
            r = sign_in(d, issuer, "apple-sealed", code=tokens.issue_code())
            assert r.status == 201, r
            wait_until(exchanged(tokens, 0), d)
            refresh = list(tokens.refresh_tokens)[-1]
            time.sleep(0.5)
            if engine.name() == "sqlite":
                stored = b"".join(p.read_bytes() for p in Path(d.data_dir).glob("roost.db*"))
                assert b"apple" in stored and refresh.encode() not in stored  # the identity is there, the token is not readable
            assert d.call("DELETE", f"/users/{r.body['user']['_id']}", token=r.body["token"]).status == 200
            wait_until(lambda: refresh in tokens.revoked, d)
        finally:
            d.stop()
            issuer.stop()
            tokens.stop()
