"""A script's ctx.refuse against a real roostd (docs/SCRIPTING.md): the app
chooses its code, but one of Roost's codes keeps the one status Roost
declares for it, and a refusal Roost cannot answer as given is the script's
error. Runs on SQLite and (ROOST_TEST_ENGINE=postgresql) on PostgreSQL."""

import uuid

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, assert_error, json_query

SCRIPT = """
roost.before("orders", "create", function(ctx)
  local e = ctx.entity
  if e.refuse then ctx.refuse(e.status, e.code, "refused as asked") end
end)
"""


@pytest.fixture(scope="module")
def roost(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("script-refusals")
    scripts = tmp / "scripts"
    scripts.mkdir()
    (scripts / "10-refusals.lua").write_text(SCRIPT)
    daemon = Roostd(tmp / "d", f"admin_token: {ADMIN}\ndefault_permission: public\nscripts_dir: {scripts}\n").start()
    yield daemon
    daemon.stop(strict=False)


def stored(roost, marker):
    r = roost.call("GET", f"/orders/_count?query={json_query({'marker': marker})}", token=ADMIN)
    assert r.status == 200, r
    return r.body["count"]


@pytest.mark.parametrize("status,code,answer", [
    (422, "OutOfStock", (422, "OutOfStock")),           # the app's own code, at the status it chose
    (404, "not_here-2", (404, "not_here-2")),
    (400, "InvalidDocument", (400, "InvalidDocument")),  # one of Roost's codes at its status
    (409, "Conflict", (409, "Conflict")),
    (422, "InvalidDocument", (500, "ScriptError")),      # Roost's code at another status: the script's error
    (400, "Forbidden", (500, "ScriptError")),
    (503, "OutOfStock", (500, "ScriptError")),           # not a 4xx
    (400, "out of stock", (500, "ScriptError")),         # not a word
])
@pytest.mark.parametrize("token", [ADMIN, None], ids=["admin", "anonymous"])
def test_a_scripts_refusal_code_keeps_one_status(roost, status, code, answer, token):
    marker = uuid.uuid4().hex
    r = roost.call("POST", "/orders", {"refuse": True, "status": status, "code": code, "marker": marker}, token=token)
    assert_error(r, *answer)
    if answer[1] == "ScriptError":
        assert "10-refusals.lua" not in str(r.body) and "refused as asked" not in str(r.body)
    else:
        assert r.body["description"] == "refused as asked"
    assert stored(roost, marker) == 0
    # the daemon keeps serving, and a write the script lets through is stored
    assert roost.call("POST", "/orders", {"marker": marker}, token=token).status == 201
    assert stored(roost, marker) == 1
