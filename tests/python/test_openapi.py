"""openapi.yaml is a valid OpenAPI document and describes every route roostd serves."""

import json
import pathlib
import uuid

import pytest
import yaml
from openapi_spec_validator import validate

SPEC_PATH = pathlib.Path(__file__).resolve().parent / ".." / ".." / "openapi.yaml"

# Every (path template, method) the daemon routes (Sources/Roost/Router.swift).
# HEAD is answered like GET and is implied by GET in OpenAPI's eyes.
SERVED = [
    ("/", "get"),
    ("/healthz", "get"),
    ("/readyz", "get"),
    ("/{collection}", "get"),
    ("/{collection}", "post"),
    ("/{collection}/_count", "get"),
    ("/{collection}/{id}", "get"),
    ("/{collection}/{id}", "put"),
    ("/{collection}/{id}", "patch"),
    ("/{collection}/{id}", "delete"),
    ("/users", "get"),
    ("/users", "post"),
    ("/users/_count", "get"),
    ("/users/me", "get"),
    ("/users/{id}", "get"),
    ("/users/{id}", "put"),
    ("/users/{id}", "patch"),
    ("/users/{id}", "delete"),
    ("/login", "post"),
    ("/logout", "post"),
]

ERROR_CODES = {
    "InvalidJSON", "InvalidDocument", "InvalidQuery", "UnsupportedOperator", "InvalidCollectionName",
    "ReservedCollectionName", "NotFound", "MethodNotAllowed", "Conflict", "PayloadTooLarge",
    "UnsupportedMediaType", "Overloaded", "Unauthorized", "InvalidToken", "InvalidCredentials", "Forbidden",
    "TooManyAttempts",
}
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture(scope="module")
def spec():
    return yaml.safe_load(SPEC_PATH.read_text())


def test_spec_is_valid_openapi(spec):
    validate(spec)
    assert spec["openapi"].startswith(("3.1", "3.0"))


@pytest.mark.parametrize("path,method", SERVED)
def test_served_route_is_described(spec, path, method):
    assert path in spec["paths"], f"{path} missing from openapi.yaml"
    op = spec["paths"][path].get(method)
    assert op is not None, f"{method.upper()} {path} missing from openapi.yaml"
    assert op.get("responses"), f"{method.upper()} {path} has no responses"
    assert any(code.startswith("2") for code in op["responses"]), f"{method.upper()} {path}: no success response"


def test_spec_describes_nothing_the_daemon_does_not_serve(spec):
    described = {(p, m) for p, item in spec["paths"].items() for m in item if m in HTTP_METHODS}
    assert described == set(SERVED)


def test_error_schema_and_codes(spec):
    error = spec["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"error", "description"}
    assert ERROR_CODES <= set(error["properties"]["error"]["enum"])
    text = SPEC_PATH.read_text()
    for code in ERROR_CODES:
        assert code in text


def test_bearer_security_scheme(spec):
    scheme = spec["components"]["securitySchemes"]["bearer"]
    assert scheme["type"] == "http" and scheme["scheme"].lower() == "bearer"
    # Signed-in-only account endpoints name the scheme; sign-up and log-in need none.
    for path, method in [("/users", "get"), ("/users/_count", "get"), ("/users/me", "get"), ("/users/{id}", "get"),
                         ("/users/{id}", "put"), ("/users/{id}", "patch"), ("/users/{id}", "delete"), ("/logout", "post")]:
        assert {"bearer": []} in spec["paths"][path][method]["security"], (path, method)
    assert spec["paths"]["/users"]["post"]["security"] == []
    assert spec["paths"]["/login"]["post"]["security"] == []


def test_access_responses_are_described(spec):
    responses = spec["components"]["responses"]
    assert "WWW-Authenticate" in responses["Unauthorized"]["headers"]
    assert "Retry-After" in responses["TooManyAttempts"]["headers"]
    assert "429" in spec["paths"]["/login"]["post"]["responses"]
    for path, methods in spec["paths"].items():
        if path in ("/", "/healthz", "/readyz"):
            continue
        for method, op in methods.items():
            if method not in HTTP_METHODS or (path, method) == ("/users", "post"):
                continue
            assert "401" in op["responses"], (path, method)
    for path, method in [("/{collection}", "post"), ("/{collection}/{id}", "put"), ("/{collection}/{id}", "patch"),
                         ("/{collection}/{id}", "delete"), ("/users/{id}", "put"), ("/users/{id}", "patch"),
                         ("/users/{id}", "delete")]:
        assert "403" in spec["paths"][path][method]["responses"], (path, method)


def test_acl_schema(spec):
    acl = spec["components"]["schemas"]["Acl"]
    assert set(acl["properties"]) == {"creator", "read", "write"}
    assert acl["properties"]["read"]["items"]["type"] == "string"
    stored = spec["components"]["schemas"]["StoredDocument"]
    assert "_acl" in stored["required"]
    assert stored["properties"]["_acl"] == {"$ref": "#/components/schemas/Acl"}
    user_props = {k for part in spec["components"]["schemas"]["User"]["allOf"] for k in _resolve(spec, part).get("properties", {})}
    assert "username" in user_props and not {"password", "oldPassword", "passwordHash"} & user_props


def test_examples_use_the_locations_collection(spec):
    text = json.dumps(spec)
    for field in ("name", "placename", "location", "details", "imageId", "categories"):
        assert f'"{field}"' in text
    assert spec["components"]["parameters"]["collection"]["example"] == "locations"


def _resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


# Live check: each served route answers one of the statuses the spec lists.
LIVE = [
    ("GET", "/", None, None),
    ("GET", "/healthz", None, None),
    ("GET", "/readyz", None, None),
    ("POST", "/specLocations", {"_id": "tg", "name": "Tiergarten", "location": [13.35, 52.51], "categories": ["Park"]}, "/{collection}"),
    ("POST", "/specLocations", {"_id": "tg"}, "/{collection}"),
    ("GET", "/specLocations?limit=5&count=true", None, "/{collection}"),
    ("GET", "/specLocations?limit=1001", None, "/{collection}"),
    ("GET", "/specLocations/_count?query=%7B%22name%22%3A%22Tiergarten%22%7D", None, "/{collection}/_count"),
    ("GET", "/specLocations/tg", None, "/{collection}/{id}"),
    ("PUT", "/specLocations/tg", {"name": "Tiergarten", "placename": "Berlin"}, "/{collection}/{id}"),
    ("PUT", "/specLocations/new1", {"name": "New"}, "/{collection}/{id}"),
    ("PATCH", "/specLocations/tg", {"details": "Big."}, "/{collection}/{id}"),
    ("PATCH", "/specLocations/nope", {"details": "Big."}, "/{collection}/{id}"),
    ("DELETE", "/specLocations/tg", None, "/{collection}/{id}"),
    ("DELETE", "/specLocations/tg", None, "/{collection}/{id}"),
    ("GET", "/users", None, "/users"),
    ("GET", "/users/_count", None, "/users/_count"),
    ("GET", "/users/me", None, "/users/me"),
    ("GET", "/users/nobody", None, "/users/{id}"),
    ("PATCH", "/users/nobody", {"title": "x"}, "/users/{id}"),
    ("PUT", "/users/nobody", {"title": "x"}, "/users/{id}"),
    ("DELETE", "/users/nobody", None, "/users/{id}"),
    ("POST", "/users", {"username": "x"}, "/users"),
    ("POST", "/login", {"username": "nobody-at-all", "password": "wrong password"}, "/login"),
    ("POST", "/logout", None, "/logout"),
    ("GET", "/specLocations?query=%7B%22%24where%22%3A%221%22%7D", None, "/{collection}"),
]


@pytest.mark.parametrize("method,url,body,template", LIVE, ids=[f"{m} {u}" for m, u, _, _ in LIVE])
def test_live_responses_are_documented(roostd, spec, method, url, body, template):
    status, headers, raw = roostd.request(method, url, body)
    assert "X-Request-Id" in headers or "x-request-id" in {k.lower() for k in headers}
    template = template or url
    op = spec["paths"][template][method.lower()]
    assert str(status) in op["responses"], f"{method} {url} answered {status}, not in the spec"
    if status >= 400:
        payload = json.loads(raw)
        assert set(payload) == {"error", "description"}
        assert payload["error"] in _resolve(spec, spec["components"]["schemas"]["Error"])["properties"]["error"]["enum"]


def _check_documented(spec, template, method, status, raw):
    op = spec["paths"][template][method.lower()]
    assert str(status) in op["responses"], f"{method} {template} answered {status}, not in the spec"
    if status >= 400:
        payload = json.loads(raw)
        assert set(payload) == {"error", "description"}
        assert payload["error"] in _resolve(spec, spec["components"]["schemas"]["Error"])["properties"]["error"]["enum"]


def test_live_account_flow_is_documented(roostd, spec):
    """Signed-in account calls answer with documented statuses and bodies."""
    name = "spec-" + uuid.uuid4().hex[:10]
    password = "spec password 123"

    def call(method, url, template, body=None, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else None
        status, _, raw = roostd.request(method, url, body, headers)
        _check_documented(spec, template, method, status, raw)
        return status, (json.loads(raw) if raw else None)

    status, session = call("POST", "/users", "/users", {"username": name, "password": password, "email": "s@example.org"})
    assert status == 201 and set(session) == set(spec["components"]["schemas"]["Session"]["required"])
    token, uid = session["token"], session["user"]["_id"]
    assert set(spec["components"]["schemas"]["StoredDocument"]["required"]) <= set(session["user"])
    assert call("POST", "/users", "/users", {"username": name, "password": password})[0] == 409
    assert call("GET", "/users?limit=5&count=true", "/users", token=token)[0] == 200
    assert call("GET", "/users/_count", "/users/_count", token=token)[0] == 200
    assert call("GET", "/users/me", "/users/me", token=token)[0] == 200
    assert call("GET", f"/users/{uid}", "/users/{id}", token=token)[0] == 200
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"title": "Spec"}, token=token)[0] == 200
    assert call("PUT", f"/users/{uid}", "/users/{id}", {"title": "Spec"}, token=token)[0] == 200
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"username": "renamed"}, token=token)[0] == 400
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"password": "new password 1"}, token=token)[0] == 403
    assert call("GET", "/users/nobody", "/users/{id}", token=token)[0] == 404
    status, login = call("POST", "/login", "/login", {"username": name, "password": password})
    assert status == 200
    assert call("GET", "/specAcl", "/{collection}", token="garbage-token")[0] == 401
    assert call("POST", "/logout", "/logout", token=login["token"])[0] == 200
    assert call("POST", "/logout", "/logout", token=login["token"])[0] == 401
    assert call("DELETE", f"/users/{uid}", "/users/{id}", token=token)[0] == 200
