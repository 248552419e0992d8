"""The trust sources JSON API: CRUD, refusals with the contract's codes, and one
organization never seeing or using another's sources."""

from __future__ import annotations

import uuid

from factories import make_staff, make_verification
from sources_support import make_party

ROOT = make_party("Test Root CA", ca=True)
SIGNER = make_party("List signer", rsa_key=True)


def pem_source(**overrides) -> dict:
    return {"name": "Our CAs", "kind": "PEM", "certificates": ROOT.pem, **overrides}


def list_source(**overrides) -> dict:
    return {
        "name": "German trusted list",
        "kind": "TRUSTED_LIST",
        "url": "https://tl.example/de.xml",
        "signer_certificates": SIGNER.pem,
        **overrides,
    }


def test_a_pem_source_is_added_read_listed_changed_and_deleted(app, client):
    staff = make_staff(app)
    created = client.post("/trust/sources", json=pem_source(), headers=staff.headers())
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["kind"] == "PEM"
    assert body["certificate_count"] == 1
    assert body["signer_certificates"] is None and body["url"] is None
    assert body["stale"] is False and body["last_error"] is None

    listed = client.get("/trust/sources", headers=staff.headers()).get_json()
    assert listed["total"] == 1 and listed["results"][0]["id"] == body["id"]

    changed = client.put(
        f"/trust/sources/{body['id']}", json={"name": "Renamed"}, headers=staff.headers()
    )
    assert changed.status_code == 200 and changed.get_json()["name"] == "Renamed"

    assert client.delete(f"/trust/sources/{body['id']}", headers=staff.headers()).status_code == 204
    missing = client.get(f"/trust/sources/{body['id']}", headers=staff.headers())
    assert missing.status_code == 400
    assert missing.get_json() == {"error": "sql: no rows in result set", "code": "NOT_FOUND"}


def test_a_list_source_defaults_to_qualified_ca_services(app, client):
    staff = make_staff(app)
    body = client.post("/trust/sources", json=list_source(), headers=staff.headers()).get_json()
    assert body["service_types"] == ["http://uri.etsi.org/TrstSvc/Svctype/CA/QC"]
    assert body["signer_certificates"].startswith("-----BEGIN CERTIFICATE-----")
    assert body["refreshed_at"] is None and body["certificate_count"] == 0


def refused(client, staff, body, status=400):
    response = client.post("/trust/sources", json=body, headers=staff.headers())
    assert response.status_code == status, response.get_json()
    return response.get_json()


def test_bad_sources_are_refused_with_a_code_and_a_plain_reason(app, client):
    staff = make_staff(app)
    cases = [
        (pem_source(certificates="not a certificate"), "certificates holds no readable PEM"),
        (pem_source(certificates=""), "certificates is required"),
        (pem_source(url="https://x.example/"), "url applies to lists"),
        (list_source(url=None), "url is required"),
        (list_source(url="http://tl.example/de.xml"), "url must be an https:// URL"),
        (list_source(signer_certificates=None), "signer_certificates is required"),
        (list_source(territories=["DE"]), "territories applies to the EU List"),
        (
            list_source(kind="LIST_OF_TRUSTED_LISTS", territories=["Germany"]),
            "territories are two-letter codes",
        ),
        (list_source(kind="VICAL", service_types=["x"]), "service_types applies to"),
    ]
    for body, words in cases:
        answer = refused(client, staff, body)
        assert answer["code"] == "INVALID_REQUEST", (body, answer)
        assert words in answer["error"], (body, answer)
    unknown_kind = refused(client, staff, pem_source(kind="CRL"))
    assert unknown_kind["code"] == "INVALID_REQUEST"
    unknown_field = refused(client, staff, pem_source(colour="blue"))
    assert unknown_field["code"] == "INVALID_REQUEST"


def test_the_kind_cannot_change(app, client):
    staff = make_staff(app)
    body = client.post("/trust/sources", json=pem_source(), headers=staff.headers()).get_json()
    response = client.put(
        f"/trust/sources/{body['id']}", json={"kind": "VICAL"}, headers=staff.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_the_api_needs_a_session(client):
    response = client.get("/trust/sources")
    assert response.status_code == 401
    assert response.get_json()["code"] == "UNAUTHORIZED"


def test_a_pem_source_has_nothing_to_refresh(app, client):
    staff = make_staff(app)
    body = client.post("/trust/sources", json=pem_source(), headers=staff.headers()).get_json()
    response = client.post(f"/trust/sources/{body['id']}/refresh", headers=staff.headers())
    assert response.status_code == 400 and response.get_json()["code"] == "INVALID_REQUEST"


def test_another_organizations_source_reads_as_missing_and_cannot_be_used(app, client):
    alice = make_staff(app)
    bob = make_staff(app, email="bob@example.test", org_name="Other")
    source = client.post("/trust/sources", json=pem_source(), headers=alice.headers()).get_json()
    path = f"/trust/sources/{source['id']}"

    assert client.get("/trust/sources", headers=bob.headers()).get_json()["total"] == 0
    for response in (
        client.get(path, headers=bob.headers()),
        client.put(path, json={"name": "Mine"}, headers=bob.headers()),
        client.delete(path, headers=bob.headers()),
        client.post(f"{path}/refresh", headers=bob.headers()),
    ):
        assert response.status_code == 400
        assert response.get_json() == {"error": "sql: no rows in result set", "code": "NOT_FOUND"}
    used = client.post(
        "/verifications",
        json={
            "name": "Bob's",
            "schema_id": "5c4a3f3e-0b1d-4c7e-9a51-000000000001",
            "trust_sources": [source["id"]],
        },
        headers=bob.headers(),
    )
    assert used.status_code == 400
    assert used.get_json()["code"] == "NOT_FOUND"
    # Alice's source is untouched.
    assert client.get(path, headers=alice.headers()).get_json()["name"] == "Our CAs"


def test_a_verification_chooses_sources_and_a_used_source_cannot_be_deleted(app, client):
    staff = make_staff(app)
    source = client.post("/trust/sources", json=pem_source(), headers=staff.headers()).get_json()
    verification = make_verification(client, staff, trust_sources=[source["id"]], attributes=[])
    assert verification["trust_sources"] == [source["id"]]

    response = client.delete(f"/trust/sources/{source['id']}", headers=staff.headers())
    assert response.status_code == 409
    assert response.get_json()["code"] == "CONFLICT"
    assert "Adult residents" in response.get_json()["error"]

    cleared = client.put(
        f"/verifications/{verification['id']}", json={"trust_sources": []}, headers=staff.headers()
    )
    assert cleared.get_json()["trust_sources"] == []
    assert (
        client.delete(f"/trust/sources/{source['id']}", headers=staff.headers()).status_code == 204
    )


def test_a_verification_without_sources_reads_as_before_with_an_empty_list(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)
    assert verification["trust_sources"] == []
    unknown = client.post(
        "/verifications",
        json={
            "name": "x",
            "schema_id": "5c4a3f3e-0b1d-4c7e-9a51-000000000001",
            "trust_sources": [str(uuid.uuid4())],
        },
        headers=staff.headers(),
    )
    assert unknown.status_code == 400 and unknown.get_json()["code"] == "NOT_FOUND"


def test_the_openapi_document_describes_the_trust_source_endpoints(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert set(paths["/trust/sources"]) >= {"get", "post"}
    assert set(paths["/trust/sources/{source_id}"]) >= {"get", "put", "delete"}
    assert "post" in paths["/trust/sources/{source_id}/refresh"]
    assert "get" in paths["/trust/service-types"]
