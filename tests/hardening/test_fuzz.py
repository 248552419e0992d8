"""Property-based fuzz of every JSON endpoint and the wallet's response endpoint (hypothesis).

Whatever arrives (random depth and size, any unicode, NUL and lone surrogates, numbers at the
edges of every integer and float type, fields of the right names holding the wrong things),
the service answers below 500, every refusal has the documented shape
``{"error": str, "code": str}``, and a refusal changes nothing in the database.

The run is bounded and repeatable: a fixed number of examples, derandomized (same inputs on
every run), no example database, so ``make test`` stays fast and a failure reproduces.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hardening_support import fill, json_endpoints, make_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from app.extensions import db

settings.register_profile(
    "verity-fuzz",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
JSON_EXAMPLES = 240
WALLET_EXAMPLES = 80

EDGE_INTEGERS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63 - 1, 2**63]
EDGE_INTEGERS += [-(2**63) - 1, 2**64, 10**30, -(10**30), 10**400]
EDGE_FLOATS = [0.0, -0.0, 1e308, -1e308, 5e-324, 1.5, 1e-7, 123456789.123456789]
ODD_TEXT = ["", " ", "\x00", "a\x00b", "\ud800", "\udfff", "\ufeff", "\u202e", "🧪", "é" * 300]
ODD_TEXT += ["null", "true", "17", "2000-01-31", "-1", "0x10", "1e999", "../../etc", "%00"]

numbers = st.one_of(
    st.sampled_from(EDGE_INTEGERS),
    st.integers(),
    st.sampled_from(EDGE_FLOATS),
    st.floats(allow_nan=False, allow_infinity=False),
)
texts = st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=40), st.text(max_size=3000))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6), st.dictionaries(texts, children, max_size=6)
    ),
    max_leaves=30,
)


@st.composite
def nested(draw: Any, inner: st.SearchStrategy) -> Any:
    """``inner`` wrapped in a random number of arrays and objects (up to 200 levels)."""
    value = draw(inner)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 3, 63, 64, 65, 200]))):
        value = [value] if draw(st.booleans()) else {draw(texts): value}
    return value


def raw_json(value: Any) -> bytes:
    # ensure_ascii writes lone surrogates as \\udxxx escapes, which a client may well send.
    return json.dumps(value).encode()


@st.composite
def bodies(draw: Any, fields: list[str]) -> bytes:
    """Mostly objects with the endpoint's own field names, sometimes anything at all."""
    kind = draw(st.sampled_from(["fields", "fields", "fields", "any", "bytes", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "deep":  # deeper than Python's parser recurses (it would raise RecursionError)
        depth = draw(st.sampled_from([999, 1000, 1001, 3000, 20000]))
        opening, closing = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        return (opening * depth + "0" + closing * depth).encode()
    if kind == "any":
        return raw_json(draw(nested(values)))
    chosen = draw(st.lists(st.sampled_from(fields), unique=True)) if fields else []
    body = {name: draw(nested(values)) for name in chosen}
    body.update(draw(st.dictionaries(texts, values, max_size=2)))
    return raw_json(body)


def fingerprint(app) -> tuple[int, ...]:
    """Row counts of every table, in one query: what a refusal must leave unchanged."""
    tables = [table.name for table in db.metadata.sorted_tables]
    query = "SELECT " + ", ".join(f"(SELECT count(*) FROM {name})" for name in tables)
    with app.app_context():
        counts = tuple(db.session.execute(text(query)).one())
        db.session.remove()
    return counts


def field_names(document: dict, method: str, path: str) -> list[str]:
    operation = document["paths"][path][method.lower()]
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    schema = schema.get("schema", {})
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return sorted(schema.get("properties", {}))


def assert_documented_answer(response, refused_changes: bool) -> None:
    # 503 NOT_CONFIGURED is documented: sign-in without an identity provider configured.
    status = response.status_code
    assert status < 500 or (status == 503 and response.get_json()["code"] == "NOT_CONFIGURED"), (
        status,
        response.get_data()[:500],
    )
    if response.status_code >= 400:
        assert response.content_type == "application/json", response.content_type
        body = response.get_json()
        assert isinstance(body, dict) and set(body) <= {"error", "code", "tier"}, body
        assert isinstance(body["error"], str) and body["error"]
        assert isinstance(body["code"], str) and body["code"].isupper()
        assert not refused_changes, "a refusal changed the database"


@pytest.fixture
def fuzzed(make_app):
    """The app with the local billing adapter, so the billing endpoints read their bodies."""
    return make_app(BILLING_PROVIDER="fake")


@pytest.fixture
def client(fuzzed):
    return fuzzed.test_client()


@pytest.fixture
def world(fuzzed, client):
    return make_world(fuzzed, client)


def test_every_json_endpoint_answers_hostile_bodies_with_a_documented_4xx(app, client, world):
    document = client.get("/openapi.json").get_json()
    endpoints = [
        (method, path, field_names(document, method, path) if path in document["paths"] else [])
        for method, path in json_endpoints(client)
    ]
    headers = {**world.headers(), "Origin": "https://verity.test"}

    @settings(settings.get_profile("verity-fuzz"), max_examples=JSON_EXAMPLES)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        method, path, fields = data.draw(st.sampled_from(endpoints), label="endpoint")
        body = data.draw(bodies(fields), label="body")
        content_type = data.draw(
            st.sampled_from(["application/json"] * 8 + ["text/plain", ""]), label="type"
        )
        before = fingerprint(app)
        response = client.open(
            fill(path, world.ids),
            method=method,
            data=body,
            headers={**headers, **({"Content-Type": content_type} if content_type else {})},
        )
        assert_documented_answer(response, fingerprint(app) != before)

    check()


def test_the_wallet_endpoint_answers_hostile_responses_with_a_documented_4xx(app, client, world):
    path = f"/oid4vp/responses/{world.ids['request_id']}"
    vp_tokens = st.one_of(
        texts,
        nested(values).map(json.dumps),
        nested(st.fixed_dictionaries({"credential": st.one_of(values, st.lists(texts))})).map(
            json.dumps
        ),
    )

    @settings(settings.get_profile("verity-fuzz"), max_examples=WALLET_EXAMPLES)
    @given(
        form=st.fixed_dictionaries(
            {},
            optional={"vp_token": vp_tokens, "state": texts, "response": texts},
        )
    )
    def check(form: dict[str, str]) -> None:
        before = fingerprint(app)
        # Encoded here: a lone surrogate goes out as the invalid UTF-8 a hostile client can send.
        body = urlencode(form, encoding="utf-8", errors="surrogatepass")
        response = client.post(path, data=body, content_type="application/x-www-form-urlencoded")
        assert_documented_answer(response, fingerprint(app) != before)

    check()
