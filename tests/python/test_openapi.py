"""openapi.yaml is a valid OpenAPI document and describes every route roostd serves."""

import json
import pathlib

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
]

ERROR_CODES = {
    "InvalidJSON", "InvalidDocument", "InvalidQuery", "UnsupportedOperator", "InvalidCollectionName",
    "ReservedCollectionName", "NotFound", "MethodNotAllowed", "Conflict", "PayloadTooLarge",
    "UnsupportedMediaType", "Overloaded",
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
    ("GET", "/users", None, "/{collection}"),
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
