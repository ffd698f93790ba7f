"""The admin's user management (#36, the console's Users page): `POST /admin/users`
creates an account with the sign-up's checks but no throttle, session or
verification mail; `PUT /admin/users/:id/password` sets a new password and ends
every session; `GET /admin/users/:id/roles`; profile edits by `PATCH /users/:id`
with the admin token. Every refusal is JSON with a fitting status. Both engines."""
import uuid

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, running_roostd

# Unverified accounts may not sign in: an address the admin gives must count as verified.
CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: public
anonymous_accounts: true
unverified_login: false
"""

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        yield d


def admin(roost, method, path, body=None, **kw):
    return roost.call(method, path, body, token=ADMIN_TOKEN, **kw)


def name(prefix="u"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create(roost, **fields):
    r = admin(roost, "POST", "/admin/users", {"password": PASSWORD, **fields})
    assert r.status == 201, r
    assert "password" not in r.body and "oldPassword" not in r.body, r.body
    return r.body


def log_in(roost, password=PASSWORD, **who):
    return roost.call("POST", "/login", {**who, "password": password})


@pytest.fixture
def user_token(roost):
    r = roost.call("POST", "/users", {"username": name("member"), "password": PASSWORD})
    assert r.status == 201, r
    return r.body["token"]


# ---------------------------------------------------------------------------
# Create.

@pytest.mark.parametrize("names", [
    {"username": None},
    {"email": None},
    {"username": None, "email": None},
])
def test_admin_creates_a_user_who_can_sign_in_at_once(roost, names):
    fields = {}
    if "username" in names:
        fields["username"] = name()
    if "email" in names:
        fields["email"] = name("mail") + "@Example.org"
    user = create(roost, displayName="Ada", plan={"tier": "pro"}, **fields)
    assert user["displayName"] == "Ada" and user["plan"] == {"tier": "pro"}
    assert user.get("username") == fields.get("username")
    if "email" in fields:
        assert user["email"] == fields["email"].lower() or user["email"].endswith("@example.org"), user
        assert user["emailVerified"] is True
    # No session was made for the admin's create.
    sessions = admin(roost, "GET", f"/admin/users/{user['_id']}/sessions")
    assert sessions.status == 200 and sessions.body == [], sessions
    # The new account signs in (by username, or by its address though unverified_login is false).
    who = {"username": fields["username"]} if "username" in fields else {"email": fields["email"]}
    r = log_in(roost, **who)
    assert r.status == 200 and r.body["user"]["_id"] == user["_id"], r
    assert log_in(roost, password="wrong password!", **who).status == 401
    stored = admin(roost, "GET", f"/users/{user['_id']}")
    assert stored.status == 200 and stored.body["displayName"] == "Ada", stored


def test_taken_names_are_409_and_create_nothing(roost):
    signed_up = roost.call("POST", "/users", {"username": name("taken"), "password": PASSWORD})
    assert signed_up.status == 201
    made = create(roost, username=name(), email=name("m") + "@example.org")
    for fields in ({"username": signed_up.body["user"]["username"]}, {"username": made["username"]},
                   {"email": made["email"]}, {"email": made["email"].upper()}):
        before = admin(roost, "GET", "/users/_count").body
        r = admin(roost, "POST", "/admin/users", {"password": PASSWORD, **fields})
        assert_error(r, 409)
        assert admin(roost, "GET", "/users/_count").body == before


@pytest.mark.parametrize("body, status", [
    ({"username": "ab", "password": PASSWORD}, 400),                    # too short
    ({"username": "has space", "password": PASSWORD}, 400),
    ({"username": "fine-name-1", "password": "short"}, 400),
    ({"username": "fine-name-2", "password": 12345678}, 400),
    ({"username": "fine-name-3"}, 400),                                 # no password
    ({"password": PASSWORD}, 400),                                      # no name at all
    ({"email": "not-an-address", "password": PASSWORD}, 400),
    ({"username": 7, "password": PASSWORD}, 400),
    (["username", "password"], 400),
    ("text", 400),
])
def test_bad_bodies_are_400_json(roost, body, status):
    assert_error(admin(roost, "POST", "/admin/users", body), status)


@pytest.mark.parametrize("raw, content_type, status", [
    (b"{not json", "application/json", 400),
    (b"", "application/json", 400),
    (b"username=x", "application/x-www-form-urlencoded", 415),
])
def test_unparsable_bodies_are_refused_as_json(roost, raw, content_type, status):
    r = admin(roost, "POST", "/admin/users", raw_body=raw, headers={"Content-Type": content_type})
    assert r.status == status and set(r.body) == {"error", "description"}, r


@pytest.mark.parametrize("method, path, body", [
    ("POST", "/admin/users", {"username": "by-non-admin", "password": PASSWORD}),
    ("PUT", "/admin/users/{id}/password", {"password": "another password"}),
    ("GET", "/admin/users/{id}/roles", None),
])
def test_only_the_admin(roost, user_token, method, path, body):
    target = create(roost, username=name())
    path = path.format(id=target["_id"])
    assert_error(roost.call(method, path, body), 401)
    assert_error(roost.call(method, path, body, token=user_token), 403)
    assert_error(roost.call(method, path, body, token="not-a-token"), 401)
    # Nothing was made or changed by the refused calls.
    assert admin(roost, "GET", "/users/_count?query=%7B%22username%22%3A%22by-non-admin%22%7D").body == {"count": 0}
    assert log_in(roost, username=target["username"]).status == 200


def test_no_signup_throttle_for_the_admin(roost):
    """Many creates from one address in a row: each is a 201 (a sign-up flood from one address would be slowed)."""
    ids = {create(roost, username=name("bulk"))["_id"] for _ in range(12)}
    assert len(ids) == 12


# ---------------------------------------------------------------------------
# Password.

def test_a_new_password_ends_every_session(roost):
    user = create(roost, username=name())
    tokens = [log_in(roost, username=user["username"]).body["token"] for _ in range(2)]
    for t in tokens:
        assert roost.call("GET", "/users/me", token=t).status == 200
    r = admin(roost, "PUT", f"/admin/users/{user['_id']}/password", {"password": "a brand new secret"})
    assert r.status == 204 and r.raw == b"", r
    for t in tokens:
        assert roost.call("GET", "/users/me", token=t).status == 401
    assert admin(roost, "GET", f"/admin/users/{user['_id']}/sessions").body == []
    assert log_in(roost, username=user["username"]).status == 401
    assert log_in(roost, password="a brand new secret", username=user["username"]).status == 200


def test_a_signed_up_users_password_can_be_set_too(roost):
    username = name("self")
    signed_up = roost.call("POST", "/users", {"username": username, "password": PASSWORD}).body
    r = admin(roost, "PUT", f"/admin/users/{signed_up['user']['_id']}/password", {"password": "set by the admin"})
    assert r.status == 204, r
    assert roost.call("GET", "/users/me", token=signed_up["token"]).status == 401
    assert log_in(roost, password="set by the admin", username=username).status == 200


@pytest.mark.parametrize("body", [
    {"password": "short"}, {"password": None}, {}, {"password": PASSWORD, "username": "other"}, [PASSWORD], "x",
])
def test_bad_password_bodies_are_400_and_change_nothing(roost, body):
    user = create(roost, username=name())
    assert_error(admin(roost, "PUT", f"/admin/users/{user['_id']}/password", body), 400)
    assert log_in(roost, username=user["username"]).status == 200


@pytest.mark.parametrize("target", ["no-such-user", "x" * 200, "%F0%9F%90%A6"])
def test_password_for_an_unknown_user_is_404(roost, target):
    assert_error(admin(roost, "PUT", f"/admin/users/{target}/password", {"password": "a new password"}), 404)


def test_a_guest_has_no_password_to_set(roost):
    guest = roost.call("POST", "/auth/anonymous")
    assert guest.status == 201, guest
    r = admin(roost, "PUT", f"/admin/users/{guest.body['user']['_id']}/password", {"password": "a new password"})
    assert_error(r, 409)
    assert roost.call("GET", "/users/me", token=guest.body["token"]).status == 200


# ---------------------------------------------------------------------------
# Profile fields and roles.

@pytest.mark.parametrize("method, change, expect", [
    ("PATCH", {"displayName": "Grace", "plan": None}, {"displayName": "Grace"}),
    ("PATCH", {"city": "Lyon"}, {"displayName": "Ada", "city": "Lyon"}),
])
def test_admin_edits_profile_fields(roost, method, change, expect):
    user = create(roost, username=name(), displayName="Ada", plan={"tier": "pro"})
    r = admin(roost, method, f"/users/{user['_id']}", change)
    assert r.status == 200, r
    stored = admin(roost, "GET", f"/users/{user['_id']}").body
    for k, v in expect.items():
        assert stored[k] == v, stored
    if change.get("plan", 1) is None:
        assert "plan" not in stored
    assert stored["username"] == user["username"]


def test_roles_of_a_user(roost):
    user = create(roost, username=name())
    assert admin(roost, "GET", f"/admin/users/{user['_id']}/roles").body == {"roles": []}
    roles = sorted(name("role") for _ in range(2))
    for role in roles:
        assert admin(roost, "POST", "/admin/roles", {"name": role}).status == 201
        assert admin(roost, "PUT", f"/admin/roles/{role}/members/{user['_id']}").status in (200, 201)
    r = admin(roost, "GET", f"/admin/users/{user['_id']}/roles")
    assert r.status == 200 and r.body == {"roles": roles} and r.header("Cache-Control") == "no-store", r
    assert admin(roost, "DELETE", f"/admin/roles/{roles[0]}/members/{user['_id']}").status == 200
    assert admin(roost, "GET", f"/admin/users/{user['_id']}/roles").body == {"roles": roles[1:]}
    assert_error(admin(roost, "GET", "/admin/users/nobody-here/roles"), 404)


def test_the_daemon_keeps_serving(roost):
    assert roost.call("GET", "/healthz").status == 200
    assert "Fatal" not in roost.log_text()
