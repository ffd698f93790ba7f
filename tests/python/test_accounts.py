"""Accounts end to end, as the WaterCooler messaging app uses them: sign-up,
log-in, the member directory, profile edits, password change, log-out,
throttling, and what ends up in the database.

Each test stands alone: `members` signs alice, bob and carol up once (and
nothing changes them), and a test that changes an account (its password,
profile or sessions) makes an account of its own. Every response of every
test is checked for leaked secrets as the test ends (`no_secret_leaks`)."""

import pytest

from roost_harness import ADMIN_TOKEN, assert_error, engine, running_roostd
from accounts_support import (
    CONFIG,
    NEW_ALICE_PASSWORD,
    PASSWORDS,
    PROFILES,
    _assert_session_response,
    app,
    q,
)

# Passwords the tests below use besides PASSWORDS: no response may ever hold one.
OTHER_SECRETS = {NEW_ALICE_PASSWORD, "the right password", "dave's password", "reset by the admin",
                 "erin's first password", "judy's password", "kim's password", "leo's password", "ivan's password"}


@pytest.fixture(scope="module", autouse=True)
def members(app):
    """alice, bob and carol, signed up once: `{name: {"id", "token"}}`. No test changes them."""
    people = {}
    for name in ("alice", "bob", "carol"):
        r = app.call("POST", "/users", {"username": name, "password": PASSWORDS[name], **PROFILES[name]})
        assert r.status == 201, r
        _assert_session_response(r.body, name)
        for k, v in PROFILES[name].items():
            assert r.body["user"][k] == v
        people[name] = {"id": r.body["user"]["_id"], "token": r.body["token"]}
    assert len({p["id"] for p in people.values()}) == 3
    return people


@pytest.fixture(autouse=True)
def no_secret_leaks(app):
    """After each test: none of its responses holds a password, a hash or a password field."""
    start = len(app.responses)
    yield
    secrets = set(PASSWORDS.values()) | OTHER_SECRETS
    for r in app.responses[start:]:
        for secret in secrets:
            assert secret.encode() not in r.raw, r
        assert b"$argon2" not in r.raw, r
        assert b'"password"' not in r.raw and b'"oldPassword"' not in r.raw, r


def sign_up(app, username, password, **profile):
    """A fresh account of the test's own: `{"id", "token"}`."""
    r = app.call("POST", "/users", {"username": username, "password": password, **profile})
    assert r.status == 201, r
    return {"id": r.body["user"]["_id"], "token": r.body["token"]}


def test_sign_up(app, members):
    profile = {"firstName": "Frank", "lastName": "Fox", "email": "frank@watercooler.test", "title": "Intern"}
    r = app.call("POST", "/users", {"username": "frank", "password": "frank's password", **profile})
    assert r.status == 201, r
    _assert_session_response(r.body, "frank")
    for k, v in profile.items():
        assert r.body["user"][k] == v
    assert r.body["user"]["_id"] not in {p["id"] for p in members.values()}


def test_sign_up_validation(app):
    cases = [
        {"username": "ab", "password": "long enough pw"},
        {"username": "has space", "password": "long enough pw"},
        {"username": "x" * 65, "password": "long enough pw"},
        {"username": "émile", "password": "long enough pw"},
        {"username": "shorty", "password": "short"},
        {"username": "big", "password": "p" * 1025},
        {"username": "nopass"},
        {"password": "long enough pw"},
        {"username": 42, "password": "long enough pw"},
    ]
    for body in cases:
        assert_error(app.call("POST", "/users", body), 400)
    # The boundaries themselves are fine.
    r = app.call("POST", "/users", {"username": "a.b_c-d@e", "password": "8bytes!!"})
    assert r.status == 201, r
    r2 = app.call("POST", "/users", {"username": "y" * 64, "password": "p" * 1024})
    assert r2.status == 201, r2
    # Lengths count characters (as the spec's minLength/maxLength do), not UTF-8 bytes.
    assert_error(app.call("POST", "/users", {"username": "sevenchars", "password": "pässwö!"}), 400)
    r3 = app.call("POST", "/users", {"username": "widechars", "password": "ü" * 1024})
    assert r3.status == 201, r3
    for s in (r, r2, r3):
        assert app.call("DELETE", f"/users/{s.body['user']['_id']}", token=s.body["token"]).status == 200


def test_duplicate_username_is_409(app):
    before = app.call("GET", "/users/_count", token=ADMIN_TOKEN).body["count"]
    for name in ("alice", "ALICE", "Alice"):
        r = app.call("POST", "/users", {"username": name, "password": "another password", "email": "evil@x.test"})
        assert_error(r, 409, "Conflict")
    assert app.call("GET", "/users/_count", token=ADMIN_TOKEN).body["count"] == before
    # The original account is untouched.
    assert app.call("POST", "/login", {"username": "alice", "password": PASSWORDS["alice"]}).status == 200
    assert app.call("POST", "/login", {"username": "alice", "password": "another password"}).status == 401


def test_log_in(app, members):
    r = app.call("POST", "/login", {"username": "alice", "password": PASSWORDS["alice"]})
    assert r.status == 200, r
    _assert_session_response(r.body, "alice")
    assert r.body["user"]["_id"] == members["alice"]["id"]
    assert r.body["user"]["email"] == PROFILES["alice"]["email"]
    assert r.body["token"] != members["alice"]["token"]
    assert app.call("POST", "/logout", token=r.body["token"]).status == 200
    # Usernames are matched case-insensitively.
    r = app.call("POST", "/login", {"username": "ALICE", "password": PASSWORDS["alice"]})
    assert r.status == 200 and r.body["user"]["_id"] == members["alice"]["id"], r
    assert app.call("POST", "/logout", token=r.body["token"]).status == 200
    # Malformed log-ins.
    assert_error(app.call("POST", "/login", {"username": "alice"}), 400)
    assert_error(app.call("POST", "/login", raw_body=b"{", headers={"Content-Type": "application/json"}), 400, "InvalidJSON")


# Log-in bodies the spec's Credentials (a username or an email, not both; every member a
# string) refuses, each with alice's right password: none signs in, none is quietly read
# another way (a wrong-typed member once was skipped, and the other name used).
MALFORMED_LOG_INS = [
    ("email of the wrong type beside a username", {"username": "alice", "email": {}}),
    ("email null beside a username", {"username": "alice", "email": None}),
    ("username of the wrong type beside an email", {"username": 5, "email": "alice@watercooler.test"}),
    ("username and email both", {"username": "alice", "email": "alice@watercooler.test"}),
    ("neither", {}),
    ("username an array", {"username": ["alice"]}),
    ("password a number", {"username": "alice", "password": 12345678}),
]


@pytest.mark.parametrize("body", [b for _, b in MALFORMED_LOG_INS], ids=[name for name, _ in MALFORMED_LOG_INS])
def test_log_in_refuses_a_malformed_body(app, members, body):
    r = app.call("POST", "/login", {"password": PASSWORDS["alice"], **body})
    assert_error(r, 400, "InvalidDocument")
    assert "token" not in r.body
    # The same name alone still signs in.
    for name in ("username", "email"):
        if isinstance(body.get(name), str):
            ok = app.call("POST", "/login", {name: body[name], "password": PASSWORDS["alice"]})
            assert ok.status == 200 and ok.body["user"]["_id"] == members["alice"]["id"], ok
            assert app.call("POST", "/logout", token=ok.body["token"]).status == 200


def test_me(app, members):
    r = app.call("GET", "/users/me", token=members["alice"]["token"])
    assert r.status == 200, r
    assert r.body["_id"] == members["alice"]["id"]
    assert r.body["email"] == PROFILES["alice"]["email"]
    assert_error(app.call("GET", "/users/me"), 401)


def test_directory_hides_others_emails(app, members):
    ids = {n: members[n]["id"] for n in ("alice", "bob", "carol")}
    r = app.call("GET", f"/users?query={q({'_id': {'$in': list(ids.values())}})}&sort=%7B%22username%22%3A1%7D",
                 token=members["alice"]["token"])
    assert r.status == 200, r
    assert [u["username"] for u in r.body] == ["alice", "bob", "carol"]
    for u in r.body:
        assert "password" not in u
        if u["username"] == "alice":
            assert u["email"] == PROFILES["alice"]["email"]
        else:
            assert "email" not in u, u
            assert u["title"] == PROFILES[u["username"]]["title"]
    # get by id
    r = app.call("GET", f"/users/{ids['bob']}", token=members["alice"]["token"])
    assert r.status == 200 and "email" not in r.body and r.body["firstName"] == "Bob", r
    # query, sort, fields, limit, skip work as in collections.
    r = app.call("GET", f"/users?query={q({'title': 'Engineer'})}&sort=%7B%22lastName%22%3A-1%7D&fields=firstName,email",
                 token=members["bob"]["token"])
    assert r.status == 200
    assert r.body == [{"_id": ids["carol"], "firstName": "Carol"}, {"_id": ids["alice"], "firstName": "Alice"}]
    r = app.call("GET", f"/users?sort=%7B%22username%22%3A1%7D&limit=1&skip=1&fields=username&query={q({'_id': {'$in': list(ids.values())}})}",
                 token=members["bob"]["token"])
    assert r.body == [{"_id": ids["bob"], "username": "bob"}]
    r = app.call("GET", f"/users/_count?query={q({'title': 'Engineer'})}", token=members["bob"]["token"])
    assert r.body == {"count": 2}
    # The admin sees everything.
    r = app.call("GET", f"/users/{ids['bob']}", token=ADMIN_TOKEN)
    assert r.body["email"] == PROFILES["bob"]["email"]
    r = app.call("GET", f"/users?query={q({'title': 'Engineer'})}", token=ADMIN_TOKEN)
    assert {u["email"] for u in r.body} == {PROFILES["alice"]["email"], PROFILES["carol"]["email"]}


def test_directory_needs_sign_in(app, members):
    for path in ("/users", "/users/_count", f"/users/{members['bob']['id']}", "/users/me"):
        assert_error(app.call("GET", path), 401)


def test_private_fields_cannot_be_probed_by_query(app, members):
    """Filtering or sorting on someone else's email must not reveal it (no oracle)."""
    token = members["bob"]["token"]
    alice_email = PROFILES["alice"]["email"]
    r = app.call("GET", f"/users/_count?query={q({'email': alice_email})}", token=token)
    assert r.status in (200, 400), r
    if r.status == 200:
        assert r.body == {"count": 0}, "counting by another user's email reveals it"
    r = app.call("GET", f"/users?query={q({'email': {'$regex': '^alice@'}})}", token=token)
    assert r.status in (200, 400), r
    if r.status == 200:
        assert r.body == [], "filtering by another user's email reveals it"


def test_profile_edit(app, members):
    kim_profile = {"firstName": "Kim", "lastName": "Kent", "email": "kim@watercooler.test", "title": "Writer"}
    kim = sign_up(app, "kim", "kim's password", **kim_profile)
    leo = sign_up(app, "leo", "leo's password", firstName="Leo", title="Designer")
    bob = members["bob"]
    r = app.call("PATCH", f"/users/{kim['id']}", {"title": "Staff Engineer", "pronouns": "she/her"}, token=kim["token"])
    assert r.status == 200, r
    assert r.body["title"] == "Staff Engineer" and r.body["username"] == "kim" and r.body["email"] == kim_profile["email"]
    # PUT replaces the profile; the username stays.
    profile = {**kim_profile, "title": "Principal Engineer"}
    r = app.call("PUT", f"/users/{kim['id']}", profile, token=kim["token"])
    assert r.status == 200, r
    assert r.body["username"] == "kim" and r.body["title"] == "Principal Engineer" and "pronouns" not in r.body
    assert r.body["_acl"]["creator"] == kim["id"]
    # Others cannot edit; anonymous must sign in; username is fixed; creator is fixed.
    assert_error(app.call("PATCH", f"/users/{kim['id']}", {"title": "Intern"}, token=bob["token"]), 403, "Forbidden")
    assert_error(app.call("PUT", f"/users/{kim['id']}", {"title": "Intern"}, token=bob["token"]), 403, "Forbidden")
    assert_error(app.call("PATCH", f"/users/{kim['id']}", {"title": "Intern"}), 401)
    assert_error(app.call("PATCH", f"/users/{kim['id']}", {"username": "kimberly"}, token=kim["token"]), 409, "ImmutableField")
    assert_error(app.call("PUT", f"/users/{kim['id']}", {**profile, "username": "kimberly"}, token=kim["token"]), 409, "ImmutableField")
    # The whole record sent back, its unchanged username included, is fine.
    assert app.call("PUT", f"/users/{kim['id']}", {**profile, "username": "kim"}, token=kim["token"]).status == 200
    assert_error(app.call("PATCH", f"/users/{kim['id']}", {"_acl": {"creator": bob["id"]}}, token=kim["token"]), 400)
    assert app.call("GET", "/users/me", token=kim["token"]).body["title"] == "Principal Engineer"
    # The admin may edit anyone.
    r = app.call("PATCH", f"/users/{leo['id']}", {"title": "Lead Designer"}, token=ADMIN_TOKEN)
    assert r.status == 200 and r.body["title"] == "Lead Designer", r
    # Nobody can log in as "kimberly".
    assert app.call("POST", "/login", {"username": "kimberly", "password": "kim's password"}).status == 401


def test_password_change(app, members):
    laptop = sign_up(app, "erin", "erin's first password")
    phone = app.call("POST", "/login", {"username": "erin", "password": "erin's first password"}).body["token"]
    url = f"/users/{laptop['id']}"
    # The old password is required, and must be right.
    assert_error(app.call("PATCH", url, {"password": NEW_ALICE_PASSWORD}, token=phone), 403)
    assert_error(app.call("PATCH", url, {"password": NEW_ALICE_PASSWORD, "oldPassword": "not it at all"}, token=phone), 403)
    # Someone else cannot, even knowing the old password.
    assert_error(app.call("PATCH", url, {"password": NEW_ALICE_PASSWORD, "oldPassword": "erin's first password"},
                          token=members["bob"]["token"]), 403)
    assert_error(app.call("PATCH", url, {"password": "short", "oldPassword": "erin's first password"}, token=phone), 400)
    assert app.call("GET", "/users/me", token=laptop["token"]).status == 200
    r = app.call("PATCH", url, {"password": NEW_ALICE_PASSWORD, "oldPassword": "erin's first password"}, token=phone)
    assert r.status == 200, r
    assert "password" not in r.body and "oldPassword" not in r.body
    # The other session is revoked; the one that made the change keeps working.
    assert_error(app.call("GET", "/users/me", token=laptop["token"]), 401, "InvalidToken")
    assert app.call("GET", "/users/me", token=phone).status == 200
    assert app.call("POST", "/login", {"username": "erin", "password": "erin's first password"}).status == 401
    r = app.call("POST", "/login", {"username": "erin", "password": NEW_ALICE_PASSWORD})
    assert r.status == 200, r
    assert app.call("GET", "/users/me", token=phone).status == 200


def test_admin_resets_password_without_old_one(app):
    ivan = sign_up(app, "ivan", "ivan's password")
    r = app.call("PATCH", f"/users/{ivan['id']}", {"password": "reset by the admin"}, token=ADMIN_TOKEN)
    assert r.status == 200, r
    # Every one of Ivan's sessions is gone.
    assert_error(app.call("GET", "/users/me", token=ivan["token"]), 401, "InvalidToken")
    assert app.call("POST", "/login", {"username": "ivan", "password": "ivan's password"}).status == 401
    r = app.call("POST", "/login", {"username": "ivan", "password": "reset by the admin"})
    assert r.status == 200, r


def test_log_out(app):
    judy = sign_up(app, "judy", "judy's password")
    r = app.call("POST", "/login", {"username": "judy", "password": "judy's password"})
    assert r.status == 200
    other = r.body["token"]
    r = app.call("POST", "/logout", token=judy["token"])
    assert r.status == 200 and r.body == {"loggedOut": True}, r
    for method, path in (("GET", "/users/me"), ("GET", "/users"), ("GET", "/messages"), ("POST", "/logout")):
        assert_error(app.call(method, path, {} if method == "POST" else None, token=judy["token"]), 401, "InvalidToken")
    assert app.call("GET", "/users/me", token=other).status == 200
    assert_error(app.call("POST", "/logout"), 401)


def test_delete_account(app, members):
    r = app.call("POST", "/users", {"username": "dave", "password": "dave's password", "email": "dave@watercooler.test"})
    dave = r.body
    second = app.call("POST", "/login", {"username": "dave", "password": "dave's password"}).body["token"]
    assert_error(app.call("DELETE", f"/users/{dave['user']['_id']}", token=members["bob"]["token"]), 403)
    assert_error(app.call("DELETE", f"/users/{dave['user']['_id']}"), 401)
    r = app.call("DELETE", f"/users/{dave['user']['_id']}", token=dave["token"])
    assert r.status == 200, r
    for token in (dave["token"], second):
        assert_error(app.call("GET", "/users/me", token=token), 401, "InvalidToken")
    assert_error(app.call("POST", "/login", {"username": "dave", "password": "dave's password"}), 401, "InvalidCredentials")
    assert app.call("GET", f"/users/{dave['user']['_id']}", token=ADMIN_TOKEN).status == 404
    # The name is free again; the admin may delete accounts too.
    r = app.call("POST", "/users", {"username": "Dave", "password": "a different one"})
    assert r.status == 201, r
    assert app.call("DELETE", f"/users/{r.body['user']['_id']}", token=ADMIN_TOKEN).status == 200
    assert_error(app.call("GET", "/users/me", token=r.body["token"]), 401, "InvalidToken")


# The per-account throttling tests run here, in this order, on the same daemon.
from accounts_throttle_cases import (  # noqa: E402
    test_unknown_username_looks_like_wrong_password,
    test_brute_force_is_throttled,
    test_throttle_refuses_correct_password_and_doubles,
)


def test_stored_secrets_are_hashed():
    """After a clean stop: Argon2id password hashes, session tokens only as hashes."""
    with running_roostd(CONFIG) as d:
        tokens = []
        for name in ("alice", "bob", "carol"):
            tokens.append(d.call("POST", "/users", {"username": name, "password": PASSWORDS[name], **PROFILES[name]}).body["token"])
            tokens.append(d.call("POST", "/login", {"username": name, "password": PASSWORDS[name]}).body["token"])
        d.stop()
        hashes = dict(engine.sql(d.data_dir, "SELECT username, password_hash FROM _credentials"))
        sessions = [row[0] for row in engine.sql(d.data_dir, "SELECT token_hash FROM _sessions")]
        assert {"alice", "bob", "carol"} <= set(hashes)
        for name, h in hashes.items():
            assert h.startswith("$argon2id$"), (name, h)
        assert len(set(hashes.values())) == len(hashes), "hashes must be salted"
        assert sessions
        for token in tokens:
            assert token not in sessions
        raw = engine.dump(d.data_dir)
        for secret in list(PASSWORDS.values()) + [NEW_ALICE_PASSWORD] + tokens:
            assert secret.encode() not in raw, "a secret is stored in clear"
