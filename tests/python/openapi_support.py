"""Shared helpers of the OpenAPI tests: the parsed openapi.yaml and checks of
live responses against it."""

import json
import pathlib

import pytest
import yaml


SPEC_PATH = pathlib.Path(__file__).resolve().parent / ".." / ".." / "openapi.yaml"

ERROR_CODES = {
    "InvalidJSON", "InvalidDocument", "InvalidQuery", "UnsupportedOperator", "InvalidCollectionName",
    "ReservedCollectionName", "NotFound", "MethodNotAllowed", "Conflict", "PayloadTooLarge",
    "UnsupportedMediaType", "Overloaded", "Unauthorized", "InvalidToken", "InvalidCredentials", "Forbidden",
    "TooManyAttempts", "EmptyBody", "InvalidMultipart", "InvalidImage", "ImageTooLarge", "RangeNotSatisfiable",
    "ShuttingDown", "InvalidCode", "EmailNotVerified", "InvalidIDToken", "TwoFactorRequired",
}


@pytest.fixture(scope="module")
def spec():
    return yaml.safe_load(SPEC_PATH.read_text())


def _resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _check_documented(spec, template, method, status, raw):
    op = spec["paths"][template][method.lower()]
    assert str(status) in op["responses"], f"{method} {template} answered {status}, not in the spec"
    if status >= 400:
        payload = json.loads(raw)
        assert set(payload) == {"error", "description"}
        assert payload["error"] in _resolve(spec, spec["components"]["schemas"]["Error"])["properties"]["error"]["enum"]


def _valid_against(spec, schema_name, value):
    """Validates `value` against a component schema (refs resolved through the whole spec)."""
    import jsonschema
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": spec["components"]}
    jsonschema.validate(value, schema)
