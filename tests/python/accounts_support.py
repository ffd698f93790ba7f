"""Shared set-up of the accounts tests: the WaterCooler config, users and a
recording daemon fixture."""

import datetime

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, json_query as q, running_roostd


CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
session_lifetime: 3600
default_permission: shared
collections:
  messages: {{permission: shared}}
"""

PASSWORDS = {
    "alice": "Tr0ub4dor&3-alice",
    "bob": "bob-sekrit-passw0rd",
    "carol": "carol's long passphrase",
}
PROFILES = {
    "alice": {"firstName": "Alice", "lastName": "Archer", "email": "alice@watercooler.test", "title": "Engineer"},
    "bob": {"firstName": "Bob", "lastName": "Baker", "email": "bob@watercooler.test", "title": "Designer"},
    "carol": {"firstName": "Carol", "lastName": "Cole", "email": "carol@watercooler.test", "title": "Engineer"},
}
NEW_ALICE_PASSWORD = "a brand new passphrase"


class Recorder:
    """Wraps the daemon and keeps every response, to look for leaked secrets."""

    def __init__(self, d):
        self.d = d
        self.responses = []

    def call(self, *args, **kwargs):
        r = self.d.call(*args, **kwargs)
        self.responses.append(r)
        return r


@pytest.fixture(scope="module")
def app():
    with running_roostd(CONFIG) as d:
        yield Recorder(d)


def _assert_session_response(body, username, lifetime=3600):
    assert set(body) == {"user", "token", "expiresAt"}
    user = body["user"]
    assert user["username"] == username
    assert "password" not in user and "oldPassword" not in user
    assert user["_acl"]["creator"] == user["_id"]
    assert isinstance(body["token"], str) and len(body["token"]) >= 40
    expires = datetime.datetime.strptime(body["expiresAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    delta = (expires - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert lifetime - 10 < delta <= lifetime + 1
