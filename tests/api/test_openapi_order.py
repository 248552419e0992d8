"""The API reference reads in the order its callers need it: the backend's calls first (the
four of a verification), then staff's, then wallets', then the probes. Swagger UI at /docs
draws tags in the order of the document's ``tags`` list; the Endpoints page follows it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BACKEND_CALLS = {
    ("post", "/verifications/individuals"),
    ("get", "/verifications/{individual_id}/connect"),
    ("get", "/verifications/{individual_id}/verify"),
    ("get", "/verifications/{verification_id}/individuals/{customer_id}"),
}


def tag_order(client) -> list[str]:
    return [tag["name"] for tag in client.get("/openapi.json").get_json()["tags"]]


def test_the_backends_calls_are_the_first_tag_and_wallets_come_after_staff(client):
    document = client.get("/openapi.json").get_json()
    order = tag_order(client)
    first = {
        (method, path)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
        if operation.get("tags", [None])[0] == order[0]
    }
    assert first >= BACKEND_CALLS
    assert order[:3] == ["individuals", "policy requests", "recipients"]
    assert order.index("issuer") > order.index("verifications")
    assert order.index("issuer") > order.index("issuer certificates")
    assert order[-1] == "operations"


def test_every_tag_an_operation_carries_is_listed_and_described(client):
    document = client.get("/openapi.json").get_json()
    listed = {tag["name"]: tag.get("description") for tag in document["tags"]}
    used = {
        tag
        for methods in document["paths"].values()
        for operation in methods.values()
        for tag in operation.get("tags", [])
    }
    assert used == set(listed)
    assert all(listed.values())


def test_the_endpoints_page_follows_the_callers_order_and_keeps_schemas_apart():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import verity_reference

    lines = verity_reference.endpoints_markdown()
    callers = [line[3:] for line in lines if line.startswith("## ")]
    assert callers[0] == "Your backend"
    assert callers.index("Wallets") > callers.index("Staff (session token)")
    tags = [line[4:] for line in lines if line.startswith("### ")]
    assert tags[0] == "individuals"
    assert "## Schemas" not in lines
    schemas = verity_reference.schemas_markdown()
    assert any(line.startswith("## `VerificationOut`") for line in schemas)
