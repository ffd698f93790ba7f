"""POST /auth/idtoken (issue #38): Sign in with Apple / Google / any OIDC issuer
by the provider's ID token, against a local issuer on loopback (discovery,
JWKS with Cache-Control, key rotation, tokens signed by PyJWT). Every check of
the verification fails on its own bad token; identities link by (provider,
sub), by a verified email only under the documented rule, and can be linked
and unlinked by their user. Runs on both engines."""

import hashlib
import json
import time

import jwt
import pytest

from roost_harness import assert_error, running_roostd
from mail_support import MailBox, config
from oidc_support import Issuer, unsigned

PW = "correct horse battery"


@pytest.fixture(scope="module")
def world():
    acme, apple, box = Issuer(), Issuer(), MailBox().start()
    providers = (
        "oidc_providers:\n"
        f"  acme: {{discovery_url: '{acme.url}/.well-known/openid-configuration', client_ids: [com.example.app, web.example.app]}}\n"
        f"  apple: {{issuer: '{apple.url}', jwks_url: '{apple.url}/jwks', client_ids: [com.example.app]}}\n"
    )
    with running_roostd(config(box.url) + providers) as d:
        yield d, acme, apple, box
    acme.stop()
    apple.stop()
    box.stop()


def sign_in(d, provider, token, nonce="raw-nonce"):
    return d.call("POST", "/auth/idtoken", {"provider": provider, "id_token": token, "nonce": nonce})


def test_first_sign_in_creates_an_account_and_later_ones_find_it(world):
    d, acme, _, _ = world
    r = sign_in(d, "acme", acme.token(sub="alice-1"))
    assert r.status == 201 and r.body["token"] and r.body["user"]["_id"], r
    uid = r.body["user"]["_id"]
    assert "email" not in r.body["user"]
    r2 = sign_in(d, "acme", acme.token(sub="alice-1", kid="ec1", aud="web.example.app"))  # ES256, the other client id
    assert r2.status == 200 and r2.body["user"]["_id"] == uid, r2
    assert d.call("GET", "/users/me", token=r2.body["token"]).body["_id"] == uid
    # Another subject is another account; the same subject at another provider too.
    assert sign_in(d, "acme", acme.token(sub="bob-1")).body["user"]["_id"] != uid


def test_a_new_account_takes_a_verified_email(world):
    d, acme, _, _ = world
    r = sign_in(d, "acme", acme.token(sub="carol-1", email="Carol@Example.org", email_verified="true"))
    assert r.status == 201 and r.body["user"]["email"] == "carol@example.org" and r.body["user"]["emailVerified"] is True, r
    r = sign_in(d, "acme", acme.token(sub="dave-1", email="dave@example.org", email_verified=False))
    assert r.status == 201 and "email" not in r.body["user"], r


BAD = {
    "alg none": lambda i: unsigned({"iss": i.url, "sub": "x", "aud": "com.example.app", "iat": int(time.time()), "exp": int(time.time()) + 600,
                                    "nonce": hashlib.sha256(b"raw-nonce").hexdigest()}),
    "HS256 with the public key as secret": lambda i: jwt.encode(
        {"iss": i.url, "sub": "x", "aud": "com.example.app", "iat": int(time.time()), "exp": int(time.time()) + 600,
         "nonce": hashlib.sha256(b"raw-nonce").hexdigest()},
        json.dumps(i.jwk("rsa1")).encode(), algorithm="HS256", headers={"kid": "rsa1"}),
    "RS256 header on the EC key": lambda i: _resign(i, kid="ec1", alg="RS256", signer="rsa1"),
    "signed by an unpublished key": lambda i: _resign(i, kid="rsa1", alg="RS256", signer="rogue"),
    "unknown kid": lambda i: i.token(kid="rogue"),
    "tampered payload": lambda i: _tamper(i.token()),
    "wrong audience": lambda i: i.token(aud="com.other.app"),
    "no audience in the list": lambda i: i.token(aud=["com.other.app", "web.other.app"]),
    "wrong issuer": lambda i: i.token(iss="https://evil.example.org"),
    "issuer differs in a slash": lambda i: i.token(iss=i.url + "/"),
    "expired": lambda i: i.token(exp_in=-120),
    "issued in the future": lambda i: i.token(iat_offset=300),
    "wrong nonce": lambda i: i.token(nonce="another nonce"),
    "nonce not hashed": lambda i: i.token(hash_nonce=False),
    "no nonce": lambda i: i.token(nonce=None),
    "not a JWT": lambda i: "not.a.jwt",
}


def _resign(issuer, kid, alg, signer):
    if signer not in issuer.keys:
        issuer.add_key(signer, alg, publish=False)
    key, _ = issuer.keys[signer]
    now = int(time.time())
    claims = {"iss": issuer.url, "sub": "x", "aud": "com.example.app", "iat": now, "exp": now + 600,
              "nonce": hashlib.sha256(b"raw-nonce").hexdigest()}
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})


def _tamper(token):
    head, body, sig = token.split(".")
    claims = json.loads(jwt.utils.base64url_decode(body))
    claims["sub"] = "someone-else"
    return ".".join([head, jwt.utils.base64url_encode(json.dumps(claims).encode()).decode(), sig])


# The check each bad token must fail at (the answer's description names it).
REASON = {
    "alg none": "algorithm", "HS256 with the public key as secret": "algorithm", "RS256 header on the EC key": "algorithm",
    "signed by an unpublished key": "signature", "unknown kid": "key the provider does not publish",
    "tampered payload": "signature", "wrong audience": "audience", "no audience in the list": "audience",
    "wrong issuer": "issuer", "issuer differs in a slash": "issuer", "expired": "expired", "issued in the future": "future",
    "wrong nonce": "nonce", "nonce not hashed": "nonce", "no nonce": "nonce", "not a JWT": "well-formed",
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_check_refuses_its_own_bad_token(world, case):
    d, acme, _, _ = world
    # The control: the same issuer's well-made token signs in.
    assert sign_in(d, "acme", acme.token(sub="control")).status in (200, 201)
    r = sign_in(d, "acme", BAD[case](acme))
    assert_error(r, 401, "InvalidIDToken")
    assert REASON[case] in r.body["description"], (case, r.body)


def test_a_token_signs_in_once(world):
    d, acme, _, _ = world
    token = acme.token(sub="replayer")
    assert sign_in(d, "acme", token).status == 201
    assert_error(sign_in(d, "acme", token), 401, "InvalidIDToken")
    # The raw nonce must be the one hashed into the token; the body is checked first.
    assert_error(sign_in(d, "acme", acme.token(sub="replayer"), nonce="other"), 401, "InvalidIDToken")
    for body in ({"provider": "acme", "id_token": token}, {"provider": "nope", "id_token": token, "nonce": "raw-nonce"},
                 {"provider": "acme", "id_token": 5, "nonce": "raw-nonce"}, {}):
        assert_error(d.call("POST", "/auth/idtoken", body), 400)


# Bodies the spec refuses, each beside a good token: 400 `InvalidDocument` before any
# key is fetched or the token used (it signs in afterwards).
MALFORMED = [
    ("nonce empty", {"nonce": ""}),
    ("nonce of 513 characters", {"nonce": "n" * 513}),
    ("nonce a number", {"nonce": 5}),
    ("provider null", {"provider": None}),
    ("id_token of 8193 characters", {"id_token": "e" * 8193}),
]


def test_a_malformed_body_is_refused_and_the_token_kept(world):
    d, acme, _, _ = world
    token = acme.token(sub="malformed-1")
    for name, change in MALFORMED:
        body = {"provider": "acme", "id_token": token, "nonce": "raw-nonce", **change}
        assert_error(d.call("POST", "/auth/idtoken", body), 400, "InvalidDocument")
    # 512 characters (not bytes: these are 3 bytes each) is the longest nonce.
    long_nonce = "\u20ac" * 512
    r = sign_in(d, "acme", acme.token(sub="malformed-2", nonce=long_nonce), nonce=long_nonce)
    assert r.status == 201, r
    assert sign_in(d, "acme", token).status == 201


def test_no_provider_configured_answers_at_once():
    """With no oidc_providers the verifying pool never starts: a sign-in once queued
    there and never answered (a connection held for good). Now 400 at once."""
    with running_roostd("") as d:
        for path in ("/auth/idtoken", "/auth/idtoken/link"):
            for provider in ("acme", ""):
                t0 = time.monotonic()
                r = d.call("POST", path, {"provider": provider, "id_token": "a.b.c", "nonce": "raw-nonce"}, timeout=5)
                assert time.monotonic() - t0 < 2
                if path == "/auth/idtoken":
                    assert_error(r, 400, "InvalidDocument")
                else:
                    assert_error(r, 401)  # linking needs a signed-in user first
        s = d.sign_up("nobody-linked")
        r = d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": "a.b.c", "nonce": "raw-nonce"}, token=s["token"], timeout=5)
        assert_error(r, 400, "InvalidDocument")


def test_keys_are_cached_and_a_made_up_kid_costs_one_shared_refetch(world):
    d, acme, _, _ = world
    assert sign_in(d, "acme", acme.token(sub="cache-1")).status in (200, 201)
    hits = acme.jwks_hits
    for i in range(3):
        assert sign_in(d, "acme", acme.token(sub=f"cache-{i}")).status in (200, 201)
    assert acme.jwks_hits == hits  # max-age=3600: no refetch
    for i in range(6):
        assert_error(sign_in(d, "acme", _unknown(acme, i)), 401)
    assert acme.jwks_hits <= hits + 1, (hits, acme.jwks_hits)


def _unknown(issuer, i):
    kid = f"made-up-{i}"
    issuer.add_key(kid, "RS256", publish=False)
    return issuer.token(kid=kid)


def test_key_rotation_is_picked_up(world):
    d, _, apple, _ = world
    assert sign_in(d, "apple", apple.token(sub="rot-1")).status == 201
    first = time.monotonic()
    apple.add_key("rsa2", "RS256")  # published now; roostd has the old set cached
    time.sleep(max(0, 10.5 - (time.monotonic() - first)))  # the refetch of an unknown kid is limited to one per 10 s
    r = sign_in(d, "apple", apple.token(sub="rot-1", kid="rsa2"))
    assert r.status == 200, r


def test_stale_keys_serve_while_the_provider_is_down():
    issuer = Issuer(cache_control="max-age=1")
    cfg = config("", ) + f"oidc_providers:\n  acme: {{discovery_url: '{issuer.url}/.well-known/openid-configuration', client_ids: [com.example.app]}}\n"
    try:
        with running_roostd(cfg) as d:
            assert sign_in(d, "acme", issuer.token(sub="s")).status == 201
            issuer.down = True
            time.sleep(11)  # past max-age and the refetch limit: roostd tries again, fails, keeps the keys
            r = sign_in(d, "acme", issuer.token(sub="s"))
            assert r.status == 200, r
            assert "OIDC key set fetch failed" in d.log_text() or "OIDC discovery failed" in d.log_text()
    finally:
        issuer.stop()


def test_linking_by_email_follows_the_rule(world):
    d, acme, apple, box = world
    # An account whose email is verified (by the code mailed at sign-up).
    r = d.call("POST", "/users", {"username": "erin", "email": "erin@example.org", "password": PW})
    erin = r.body["user"]["_id"]
    code = box.wait_for("erin@example.org")[0].code
    # Before verification: a matching token never joins it.
    assert_error(sign_in(d, "apple", apple.token(sub="erin-apple", email="erin@example.org", email_verified=True)), 409)
    assert d.call("POST", "/auth/verify-email", {"email": "erin@example.org", "code": code}).status == 200
    # A provider without link_by_email never joins by email.
    assert_error(sign_in(d, "acme", acme.token(sub="erin-acme", email="erin@example.org", email_verified=True)), 409)
    # An unverified email in the token does not either (a new account, without the address).
    r = sign_in(d, "apple", apple.token(sub="erin-apple-2", email="erin@example.org", email_verified=False))
    assert r.status == 201 and r.body["user"]["_id"] != erin and "email" not in r.body["user"], r
    # Apple's string "true", a verified account: joined, and found by (provider, sub) from then on.
    r = sign_in(d, "apple", apple.token(sub="erin-apple", email="ERIN@example.org", email_verified="true"))
    assert r.status == 200 and r.body["user"]["_id"] == erin, r
    r = sign_in(d, "apple", apple.token(sub="erin-apple"))
    assert r.status == 200 and r.body["user"]["_id"] == erin, r


def test_link_and_unlink(world):
    d, acme, apple, _ = world
    fay = d.sign_up("fay")
    t, uid = fay["token"], fay["user"]["_id"]
    link = lambda tok, token=t, provider="acme": d.call("POST", "/auth/idtoken/link",
                                                       {"provider": provider, "id_token": tok, "nonce": "raw-nonce"}, token=token)
    assert_error(d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": acme.token(sub="fay-acme"), "nonce": "raw-nonce"}), 401)
    r = link(acme.token(sub="fay-acme"))
    assert r.status == 200 and r.body == {"provider": "acme", "linked": True}, r
    assert sign_in(d, "acme", acme.token(sub="fay-acme")).body["user"]["_id"] == uid
    me = d.call("GET", "/auth/account", token=t).body
    assert me["hasPassword"] is True and [i["provider"] for i in me["identities"]] == ["acme"] and me["twoFactor"] is False, me
    # The same identity for another account, or a second acme identity for this one: 409.
    gus = d.sign_up("gus")
    assert_error(link(acme.token(sub="fay-acme"), token=gus["token"]), 409)
    assert_error(link(acme.token(sub="fay-acme-2")), 409)
    assert d.call("DELETE", "/auth/idtoken/link/acme", token=t).status == 200
    assert d.call("GET", "/auth/account", token=t).body["identities"] == []
    assert_error(d.call("DELETE", "/auth/idtoken/link/acme", token=t), 404)
    assert sign_in(d, "acme", acme.token(sub="fay-acme")).body["user"]["_id"] != uid  # a new account now
    # An account made by a provider cannot unlink its only way to sign in.
    r = sign_in(d, "apple", apple.token(sub="only-apple"))
    assert d.call("GET", "/auth/account", token=r.body["token"]).body["hasPassword"] is False
    assert_error(d.call("GET", "/auth/account"), 401)
    assert_error(d.call("DELETE", "/auth/idtoken/link/apple", token=r.body["token"]), 409)
    # Deleting the account removes its identities: the next sign-in makes a new account.
    assert d.call("DELETE", f"/users/{r.body['user']['_id']}", token=r.body["token"]).status == 200
    r2 = sign_in(d, "apple", apple.token(sub="only-apple"))
    assert r2.status == 201 and r2.body["user"]["_id"] != r.body["user"]["_id"]


def test_racing_first_sign_ins_and_links_make_one_account_and_one_link(world):
    """Linking races: twelve first sign-ins of one new subject at once (each with its own token,
    as twelve app launches would send) make exactly one account; six users linking the same new
    identity at once: exactly one gets it, the others 409, and sign-ins find that one."""
    import concurrent.futures
    d, acme, _, _ = world
    tokens = [acme.token(sub="racer-1") for _ in range(12)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda tok: sign_in(d, "acme", tok), tokens))
    assert all(r.status in (200, 201) for r in answers), [(r.status, r.body) for r in answers]
    assert len({r.body["user"]["_id"] for r in answers}) == 1, [r.body["user"]["_id"] for r in answers]
    assert [r.status for r in answers].count(201) == 1, [r.status for r in answers]

    users = [d.sign_up(f"linker{i}") for i in range(6)]
    link_tokens = [acme.token(sub="contested-1") for _ in users]

    def link(pair):
        user, tok = pair
        return d.call("POST", "/auth/idtoken/link", {"provider": "acme", "id_token": tok, "nonce": "raw-nonce"},
                      token=user["token"])
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        links = list(pool.map(link, zip(users, link_tokens)))
    statuses = sorted(r.status for r in links)
    assert statuses == [200] + [409] * 5, [(r.status, r.body) for r in links]
    winner = users[[r.status for r in links].index(200)]["user"]["_id"]
    assert sign_in(d, "acme", acme.token(sub="contested-1")).body["user"]["_id"] == winner
