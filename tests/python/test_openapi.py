"""openapi.yaml is a valid OpenAPI document and describes every route roostd serves."""

import json

import pytest
from openapi_spec_validator import validate

from openapi_support import ERROR_CODES, SPEC_PATH, _resolve, spec
from roost_harness import ADMIN_TOKEN, running_roostd


# HEAD is answered like GET and is implied by GET in OpenAPI's eyes.
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture(scope="module")
def served():
    """Every (path template, method) the daemon routes, from its own route table
    (`GET /admin/routes`): `:name` becomes `{name}`; the `*` fallbacks (404s and
    the console's files) are not API operations."""
    with running_roostd(f"admin_token: {ADMIN_TOKEN}\n") as d:
        status, _, raw = d.request("GET", "/admin/routes", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert status == 200
        assert d.request("GET", "/admin/routes")[0] == 401
    routes = json.loads(raw)
    assert len(routes) > 40 and {"template": "/users/:id", "methods": ["GET", "PUT", "PATCH", "DELETE"], "anyMethod": False} in routes
    pairs = set()
    for route in routes:
        if route["anyMethod"] or route["template"].endswith("/*"):
            continue
        path = "/".join("{" + part[1:] + "}" if part.startswith(":") else part for part in route["template"].split("/")) or "/"
        pairs |= {(path, method.lower()) for method in route["methods"]}
    return pairs




def test_spec_is_valid_openapi(spec):
    validate(spec)
    assert spec["openapi"].startswith(("3.1", "3.0"))


def test_every_served_route_is_described(spec, served):
    described = {(p, m) for p, item in spec["paths"].items() for m in item if m in HTTP_METHODS}
    missing = sorted(served - described)
    assert not missing, f"routes missing from openapi.yaml: {missing}"
    for path, method in served:
        op = spec["paths"][path][method]
        assert any(code.startswith("2") for code in op["responses"]), f"{method.upper()} {path}: no success response"


def test_spec_describes_nothing_the_daemon_does_not_serve(spec, served):
    described = {(p, m) for p, item in spec["paths"].items() for m in item if m in HTTP_METHODS}
    extra = sorted(described - served)
    assert not extra, f"openapi.yaml describes routes roostd does not serve: {extra}"


def test_admin_operations_need_the_bearer_scheme(spec):
    for path, item in spec["paths"].items():
        if path.startswith(("/admin/", "/push/")):
            for method, op in item.items():
                if method in HTTP_METHODS:
                    assert {"bearer": []} in op["security"] and "401" in op["responses"], (path, method)


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
        if path in ("/", "/openapi.yaml", "/healthz", "/readyz", "/metrics"):
            continue
        for method, op in methods.items():
            if method not in HTTP_METHODS or (path, method) == ("/users", "post"):
                continue
            assert "401" in op["responses"], (path, method)
    for path, method in [("/{collection}", "post"), ("/{collection}/{id}", "put"), ("/{collection}/{id}", "patch"),
                         ("/{collection}/{id}", "delete"), ("/users/{id}", "put"), ("/users/{id}", "patch"),
                         ("/users/{id}", "delete"), ("/files", "post"), ("/files/{id}", "delete")]:
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


def test_file_schemas(spec):
    meta = spec["components"]["schemas"]["FileMeta"]
    assert {"_id", "contentType", "size", "sha256", "url", "_acl", "_createdAt", "_updatedAt"} <= set(meta["required"])
    assert {"width", "height", "name", "thumbnails"} <= set(meta["properties"])
    thumb = _resolve(spec, meta["properties"]["thumbnails"]["additionalProperties"])
    assert thumb["properties"]["state"]["enum"] == ["pending", "ready", "failed"]
    assert {"contentType", "width", "height", "size", "url"} <= set(thumb["properties"])
    upload = spec["paths"]["/files"]["post"]
    assert {"application/octet-stream", "multipart/form-data"} <= set(upload["requestBody"]["content"])
    for code in ("201", "400", "401", "403", "413", "415", "422", "503"):
        assert code in upload["responses"], code
    for code in ("200", "206", "304", "404", "416"):
        assert code in spec["paths"]["/files/{id}"]["get"]["responses"], code
    thumb_params = {p["name"] for p in spec["paths"]["/files/{id}/thumbnail"]["get"]["parameters"] if "name" in p}
    assert {"size", "w", "h", "fit"} <= thumb_params
    assert spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"].keys() == {"text/plain"}
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]


# The API areas the status page lists, each by an endpoint it must name.
AREAS = [("Collections", "/:collection/_count"), ("Files", "/files/:id/thumbnail"), ("Accounts", "POST /login"),
         ("Messaging", "POST /messages"), ("Live updates", "GET /events?subscribe="), ("Delta sync", "_deltaset?since="),
         ("Batch", "POST /_batch"), ("Push", "/push/devices"), ("Webhooks (admin)", "/admin/webhooks/endpoints"),
         ("Admin", "/_/ (console)")]


@pytest.mark.parametrize("area,endpoint", AREAS)
def test_status_page_lists_every_api_area(roostd, area, endpoint):
    status, headers, raw = roostd.request("GET", "/")
    page = raw.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert f"<td>{area}</td>" in page
    assert endpoint.replace("&", "&amp;") in page
    assert '<a href="/openapi.yaml">' in page


def test_status_page_and_spec_carry_one_version(spec):
    # The version is shown to the admin token (server_info: admin, the default).
    with running_roostd(f"admin_token: {ADMIN_TOKEN}\n") as d:
        status, _, raw = d.request("GET", "/", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert status == 200 and f"<h1>Roost {spec['info']['version']}</h1>" in raw.decode()


def test_daemon_serves_the_repository_openapi_yaml(roostd):
    status, headers, raw = roostd.request("GET", "/openapi.yaml")
    assert status == 200 and headers["Content-Type"].startswith("application/yaml")
    assert raw == SPEC_PATH.read_bytes()
    status, _, _ = roostd.request("POST", "/openapi.yaml", raw_body=b"")
    assert status == 405
