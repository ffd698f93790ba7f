"""What an anonymous caller learns of the operator's setup, and whether a
client can fill error-level logs (issue #33): `/` names the version and the
listen addresses only to the admin token unless `server_info: public`;
`/metrics` answers loopback clients (after `trusted_proxies`) and the admin
token unless `metrics_access` says otherwise; a client's regex or query past
its limits is logged at debug, never at error."""

import json
import urllib.parse

import pytest

from hostile_world import CATASTROPHIC
from roost_harness import ADMIN_TOKEN, running_roostd

BASE = f"""admin_token: {ADMIN_TOKEN}
default_permission: public
trusted_proxies: ["127.0.0.1"]
log_level: debug
"""
OUTSIDE = {"X-Forwarded-For": "203.0.113.9"}   # a client beyond the trusted proxy
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
USER_TOKEN = "not-the-admin-token-0123456789abcdef"


def status_page(d, headers=None):
    status, _, raw = d.request("GET", "/", headers=headers)
    assert status == 200
    return raw.decode()


def version(d):
    return d.request("GET", "/openapi.yaml")[2].decode().split("\n  version: ")[1].split("\n")[0]


@pytest.mark.parametrize("setting,anonymous_sees", [("", False), ("server_info: admin\n", False), ("server_info: public\n", True)])
def test_status_page_details(setting, anonymous_sees):
    with running_roostd(BASE + setting) as d:
        v = version(d)
        port = str(d.port)
        for headers, sees in [(None, anonymous_sees), (OUTSIDE, anonymous_sees), (ADMIN, True),
                              ({"Authorization": f"Bearer {USER_TOKEN}"}, anonymous_sees)]:
            page = status_page(d, headers)
            assert (f"Roost {v}" in page) == sees, (headers, page[:300])
            assert (port in page) == sees, (headers, page[:300])


# (metrics_access, headers, status)
METRICS = [
    ("", None, 200), ("", OUTSIDE, 403), ("", {**OUTSIDE, **ADMIN}, 200),
    ("", {**OUTSIDE, "Authorization": f"Bearer {USER_TOKEN}"}, 403),
    ("metrics_access: admin\n", None, 403), ("metrics_access: admin\n", ADMIN, 200),
    ("metrics_access: admin\n", {**OUTSIDE, **ADMIN}, 200),
    ("metrics_access: public\n", OUTSIDE, 200), ("metrics_access: local\n", OUTSIDE, 403),
]


@pytest.mark.parametrize("setting,headers,status", METRICS)
def test_metrics_access(setting, headers, status):
    with running_roostd(BASE + setting) as d:
        got, hdrs, raw = d.request("GET", "/metrics", headers=headers)
        assert got == status, (got, raw[:200])
        if status == 200:
            assert b"# TYPE" in raw
        else:
            assert b'"error"' in raw and b"# TYPE" not in raw


def test_bad_metrics_access_is_refused_at_start(tmp_path):
    from roost_harness import Roostd, RoostdError
    d = Roostd(tmp_path, BASE + "metrics_access: everyone\n")
    with pytest.raises(RoostdError):
        d.start(timeout=10)
    assert "metrics_access" in d.log_text()
    d.close()


def test_a_clients_regex_past_its_limit_is_not_an_error_in_the_log():
    with running_roostd(BASE) as d:
        assert d.call("POST", "/things", {"s": "a" * 40}).status == 201
        for pattern in CATASTROPHIC:
            flt = urllib.parse.quote(json.dumps({"s": {"$regex": pattern}}))
            r = d.call("GET", f"/things?query={flt}")
            assert r.status == 400 and r.body["error"] == "RegexTooComplex", r
        log = d.log_text()
        lines = [line for line in log.splitlines() if "database error" in line]
        assert lines, log[-2000:]                        # logged, for an operator at debug level
        assert not any("error" in line.split("database error")[0].lower() for line in lines), lines
