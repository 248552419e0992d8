"""/openapi.json, generated from the routes and the pydantic models that validate them."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from app.errors import NOT_FOUND_TEXT
from app.web.converters import MAX_DATABASE_INTEGER
from app.web.payloads.base import ErrorOut

REF_TEMPLATE = "#/components/schemas/{model}"
SECURITY: dict[str | None, list[dict[str, list[str]]]] = {
    "apikey": [{"apikey": []}],
    "session": [{"session": []}],
    None: [],
}
PATH_PARAM = re.compile(r"<(?:[a-z]+:)?([a-zA-Z_]+)>")
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")

# The errors every route of a kind can give, from how it is reached. Anything
# else (404, 409, 410, 429, 5xx) is in ``default``; all of them have the same JSON body.
BAD_REQUEST = (
    "Malformed request, a rejected value, or not found. An ID that does not exist (or is "
    "another organization's) answers 400 with code NOT_FOUND and the fixed text "
    "'sql: no rows in result set': the interface's words for \"not found\", kept for the "
    "clients written against it; no database error is behind it. Branch on code."
)
# What a 400 looks like, in words a new integrator reads correctly.
BAD_REQUEST_EXAMPLES = {
    "not_found": {
        "summary": "Not found: no such ID for this organization (the fixed text means that)",
        "value": {"error": NOT_FOUND_TEXT, "code": "NOT_FOUND"},
    },
    "invalid_request": {
        "summary": "A rejected value",
        "value": {
            "error": "customer_id: String should have at least 1 character",
            "code": "INVALID_REQUEST",
        },
    },
}
UNAUTHORIZED = {
    "apikey": "Missing, invalid or deleted integration key",
    "session": "Missing, invalid or expired session token",
}
UPGRADE_REQUIRED = "The acting organization is on the Free plan: code UPGRADE_REQUIRED, tier FREE"
FORBIDDEN = "Not allowed: current-identity names an organization the caller is not a member of"
UNSUPPORTED_MEDIA = "The body is not declared JSON: code UNSUPPORTED_MEDIA_TYPE"
UNAVAILABLE = (
    "Storage cannot be reached right now (code STORAGE_UNAVAILABLE: retry after Retry-After "
    "seconds), or an upstream answered badly (code UPSTREAM_FAILED)"
)
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying; sent with STORAGE_UNAVAILABLE",
        "schema": {"type": "integer"},
    }
}
CURRENT_IDENTITY = {
    "name": "current-identity",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "The organization to act for; the caller's oldest one when absent.",
}


IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": "Any unique value (a UUID) to make a retry safe: the same key with the same "
    "body within 24 hours answers what the first request answered, with the header "
    "`Idempotent-Replayed: true`; the same key with another body is 422 "
    "IDEMPOTENCY_KEY_REUSED. Keys belong to the acting organization.",
}
IDEMPOTENCY_REUSED = "The Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED)"
IDEMPOTENCY_IN_USE = (
    "The first request with this Idempotency-Key is still running (IDEMPOTENCY_KEY_IN_USE)"
)


# The tags in the order a reader meets them, by who calls: the organization's backend first (the
# four calls of a verification and the other integration-key calls), then what staff and their
# scripts call with a session token, then what wallets reach, then the probes. Swagger UI at
# /docs and the Endpoints page draw the groups in this order. Each caller's name comes first in
# the description, so a group says who it is for.
TAGS: tuple[tuple[str, str], ...] = (
    (
        "individuals",
        "Your backend: open an individual, hand the person the link, poll, and take the "
        "decision from the authenticated lookup (integration key)",
    ),
    ("policy requests", "Your backend: a policy request and its status (integration key)"),
    ("recipients", "Your backend: the people credentials are issued to (integration key)"),
    ("verifications", "Staff (session token): define verifications and read their individuals"),
    ("schemas", "Staff (session token): credential schemas"),
    ("credentials", "Staff (session token): issue, revoke and resend credentials"),
    ("events", "Your backend: the organization's events pushed as they happen (integration key)"),
    ("webhooks", "Staff (session token): webhook endpoints and their deliveries"),
    ("integrations", "Staff (session token): integration keys for the backend"),
    ("trust", "Staff (session token): trusted issuers' sources"),
    ("verifier identity", "Staff (session token): the certificate the requests carry"),
    ("issuer certificates", "Staff (session token): the issuer's certificates"),
    ("organizations", "Staff (session token): organizations, members and codes"),
    ("audit", "Staff (session token): the audit trail"),
    ("plan", "Staff (session token): the plan, vouchers and billing"),
    ("sign-in", "Staff (session token): sign in through the identity provider for the token"),
    ("issuer", "Wallets: the OpenID4VCI issuer, its metadata and status lists"),
    ("operations", "Operators: liveness and readiness probes"),
)
TAG_ORDER = {name: index for index, (name, _) in enumerate(TAGS)}


def build(app: Flask) -> dict[str, Any]:
    operations = []
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        view = app.view_functions.get(rule.endpoint)
        doc = getattr(view, "openapi", None)
        if doc is None:
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            operations.append((rule, method, view, doc))

    # All models in one go, so a model shown both as input and as output gets one name per
    # shape (``Name-Input``, ``Name-Output``) instead of the last one written winning.
    wanted: dict[tuple[Any, JsonSchemaMode], TypeAdapter[Any]] = {
        (ErrorOut, "serialization"): TypeAdapter(ErrorOut)
    }
    for _rule, method, _view, doc in operations:
        if _has_body(doc, method):
            wanted.setdefault((doc["body"], "validation"), TypeAdapter(doc["body"]))
        for model in doc["responses"].values():
            if model is not None:
                wanted.setdefault((model, "serialization"), TypeAdapter(model))
    schemas, definitions = TypeAdapter.json_schemas(
        [(model, mode, adapter) for (model, mode), adapter in wanted.items()],
        ref_template=REF_TEMPLATE,
    )

    paths: dict[str, Any] = {}
    used: set[str] = set()
    for rule, method, view, doc in operations:
        used.update(doc["tags"])
        path = PATH_PARAM.sub(r"{\1}", rule.rule)
        paths.setdefault(path, {})[method.lower()] = _operation(
            rule.rule, rule.endpoint, method, view, doc, schemas
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Verity",
            "version": "1.0.0",
            "description": (
                "Verify people by the digital credentials they present, and issue credentials. "
                "A schema names its credential format: dc+sd-jwt (SD-JWT VC: issuer signature, "
                "disclosures, key binding to the request), mso_mdoc (ISO mdoc: IssuerAuth to "
                "an IACA root, MSO validity and digests, the device signature over the "
                "request's OpenID4VP or DC API handover) or jwt_vc_json (W3C VC-JWT, VCDM 1.1 "
                "and 2.0: the holder's presentation with the request's nonce and audience, the "
                "issuer's credential about that holder). Every format: trusted issuers, "
                "validity, revocation (Token Status List, in CWT form for mdoc; Bitstring "
                "Status List for W3C), the verification's conditions. Credentials are issued "
                "as SD-JWT VCs. This document is drawn as an interactive reference at /docs."
            ),
        },
        "tags": [
            {"name": name, "description": description} for name, description in TAGS if name in used
        ]
        + [{"name": name} for name in sorted(used - TAG_ORDER.keys())],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(definitions.get("$defs", {}).items())),
            "securitySchemes": {
                "apikey": {"type": "apiKey", "in": "header", "name": "apikey"},
                "session": {"type": "http", "scheme": "bearer"},
            },
        },
    }


def _path_schema(rule: str, name: str) -> dict[str, Any]:
    """``<int:...>`` holds what an INTEGER column holds (a larger number is a 404)."""
    if f"<int:{name}>" in rule:
        return {"type": "integer", "minimum": 0, "maximum": MAX_DATABASE_INTEGER}
    return {"type": "string"}


def _has_body(doc: dict[str, Any], method: str) -> bool:
    return doc["body"] is not None and method in BODY_METHODS


def _operation(
    rule: str,
    endpoint: str,
    method: str,
    view: Any,
    doc: dict[str, Any],
    schemas: dict[tuple[Any, JsonSchemaMode], dict[str, Any]],
) -> dict[str, Any]:
    auth = getattr(view, "auth", None)
    path_params = PATH_PARAM.findall(rule)
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": _path_schema(rule, name)}
        for name in path_params
    ]
    parameters += [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": {"type": "string"},
            "description": text,
        }
        for name, text in doc["query"].items()
    ]
    parameters += [
        {
            "name": name,
            "in": "header",
            "required": False,
            "schema": {"type": "string"},
            "description": text,
        }
        for name, text in doc.get("headers", {}).items()
    ]
    if auth == "session":
        parameters.append(dict(CURRENT_IDENTITY))
    if getattr(view, "idempotent", False):
        parameters.append(dict(IDEMPOTENCY_KEY))
    operation: dict[str, Any] = {
        "operationId": f"{endpoint}.{method.lower()}",
        "summary": doc["summary"],
        "security": SECURITY[auth],
        "parameters": parameters,
        "responses": {},
    }
    if doc["tags"]:
        operation["tags"] = list(doc["tags"])
    if _has_body(doc, method):
        operation["requestBody"] = {
            "required": method != "DELETE",
            "content": {"application/json": {"schema": schemas[(doc["body"], "validation")]}},
        }

    responses = operation["responses"]
    if doc.get("page"):
        return _page_operation(operation, doc)
    for status, model in doc["responses"].items():
        response: dict[str, Any] = {"description": "OK" if status < 300 else "See error"}
        if model is not None:
            response["content"] = {
                "application/json": {"schema": schemas[(model, "serialization")]}
            }
        responses[str(status)] = response
    if doc.get("stream"):
        responses["200"] = {
            "description": doc["stream"],
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    error = {"application/json": {"schema": schemas[(ErrorOut, "serialization")]}}
    for status, text in doc.get("errors", {}).items():
        responses.setdefault(str(status), {"description": text, "content": error})
    if path_params or doc["query"] or _has_body(doc, method):
        bad_request = {
            "application/json": {**error["application/json"], "examples": BAD_REQUEST_EXAMPLES}
        }
        responses.setdefault("400", {"description": BAD_REQUEST, "content": bad_request})
    if auth is not None:
        responses.setdefault("401", {"description": UNAUTHORIZED[auth], "content": error})
    if getattr(view, "tier_gated", False):
        responses.setdefault("402", {"description": UPGRADE_REQUIRED, "content": error})
    if auth == "session":
        responses.setdefault("403", {"description": FORBIDDEN, "content": error})
    if getattr(view, "idempotent", False):
        responses.setdefault("409", {"description": IDEMPOTENCY_IN_USE, "content": error})
        responses.setdefault("422", {"description": IDEMPOTENCY_REUSED, "content": error})
    if _has_body(doc, method):
        responses.setdefault("415", {"description": UNSUPPORTED_MEDIA, "content": error})
    # Every documented route reads or writes storage, so every one can meet an outage.
    responses.setdefault(
        "502", {"description": UNAVAILABLE, "headers": RETRY_AFTER, "content": error}
    )
    responses["default"] = {"description": "Error: JSON with a stable `code`", "content": error}
    return operation


PAGE = {"text/html": {"schema": {"type": "string"}}}
PAGE_UNAVAILABLE = (
    "Storage cannot be reached right now: a page saying so, as the JSON API answers "
    "STORAGE_UNAVAILABLE; retry after Retry-After seconds"
)


def _page_operation(operation: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """A route for people: redirects and HTML pages, every error a page in their language."""
    responses = operation["responses"]
    for status in doc["responses"]:
        responses[str(status)] = {"description": doc["summary"]}
    for status, text in doc.get("errors", {}).items():
        responses[str(status)] = {"description": text, "content": PAGE}
    responses.setdefault(
        "502", {"description": PAGE_UNAVAILABLE, "headers": RETRY_AFTER, "content": PAGE}
    )
    responses["default"] = {"description": "Error: an HTML page for the person", "content": PAGE}
    return operation
