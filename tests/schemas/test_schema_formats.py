"""A schema names the credential format wallets present it in, and that format's type
identifier: vct for dc+sd-jwt, doctype and namespace for mso_mdoc, types for jwt_vc_json."""

from __future__ import annotations

import uuid

import pytest
from factories import make_staff

from app.extensions import db
from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, SD_JWT_VC, CredentialType
from app.schemas.models import Schema
from app.schemas.public import PUBLIC_SCHEMAS, seed_public_schemas

MDL_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"
PID_MDOC_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000005"
MDOC_BODY = {
    "name": "Club licence",
    "format": "mso_mdoc",
    "doctype": "org.example.club.1",
    "namespace": "org.example.club.1",
    "attributes": [
        {"name": "member_number", "type": "TEXT"},
        {"name": "age_over_18", "type": "BOOLEAN"},
        {"name": "domestic_class", "type": "TEXT", "namespace": "org.example.club.aamva"},
    ],
}
VC_BODY = {
    "name": "Diploma",
    "format": "jwt_vc_json",
    "types": ["UniversityDegreeCredential"],
    "attributes": [{"name": "degree.name", "type": "TEXT"}],
}


def create(client, staff, body: dict):
    return client.post("/schemas", json=body, headers=staff.headers())


def test_a_schema_without_a_format_is_an_sd_jwt_vc(app, client):
    staff = make_staff(app)
    created = create(client, staff, {"name": "X", "vct": "urn:x", "attributes": [{"name": "a"}]})
    assert created.status_code == 201
    body = created.get_json()
    assert (body["format"], body["vct"], body["doctype"], body["types"]) == (
        "dc+sd-jwt",
        "urn:x",
        None,
        None,
    )


def test_an_mdoc_schema_names_its_doctype_namespace_and_attribute_namespaces(app, client):
    staff = make_staff(app)
    created = create(client, staff, MDOC_BODY)
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert (body["format"], body["doctype"], body["namespace"], body["vct"]) == (
        "mso_mdoc",
        "org.example.club.1",
        "org.example.club.1",
        "",
    )
    assert body["attributes"][2]["namespace"] == "org.example.club.aamva"
    with app.app_context():
        schema = db.session.get(Schema, uuid.UUID(body["id"]))
        assert schema.credential_type() == CredentialType(
            MSO_MDOC,
            doctype="org.example.club.1",
            namespace="org.example.club.1",
            element_namespaces=(("domestic_class", "org.example.club.aamva"),),
        )


def test_a_w3c_schema_names_its_types(app, client):
    staff = make_staff(app)
    created = create(client, staff, VC_BODY)
    assert created.status_code == 201, created.get_json()
    with app.app_context():
        schema = db.session.get(Schema, uuid.UUID(created.get_json()["id"]))
        assert schema.credential_type() == CredentialType(
            JWT_VC_JSON, types=("UniversityDegreeCredential",)
        )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {**MDOC_BODY, "doctype": None},
            "doctype is required for an mso_mdoc schema",
        ),
        (
            {k: v for k, v in MDOC_BODY.items() if k != "namespace"},
            "namespace is required for an mso_mdoc schema",
        ),
        ({**VC_BODY, "types": None}, "types is required for a jwt_vc_json schema"),
        (
            {**VC_BODY, "attributes": [{"name": "a", "namespace": "n"}]},
            "Only mso_mdoc schema attributes have a namespace",
        ),
    ],
    ids=["mdoc without doctype", "mdoc without namespace", "vc", "ns"],
)
def test_each_format_needs_its_own_type_identifier(app, client, body, message):
    staff = make_staff(app)
    response = create(client, staff, body)
    assert response.status_code == 400
    assert response.get_json()["error"] == message


def test_a_new_sd_jwt_schema_without_vct_gets_the_address_of_its_type_metadata(app, client):
    staff = make_staff(app)
    response = create(client, staff, {"name": "X", "attributes": [{"name": "a"}]})
    assert response.status_code == 201, response.get_json()
    schema = response.get_json()
    assert schema["vct"] == f"{app.config['PUBLIC_URL']}/types/{schema['id']}"


def test_a_schema_turned_sd_jwt_later_still_needs_its_vct(app, client):
    staff = make_staff(app)
    mdoc = create(client, staff, MDOC_BODY).get_json()
    response = client.put(
        f"/schemas/{mdoc['id']}", json={"format": "dc+sd-jwt"}, headers=staff.headers()
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "vct is required for a dc+sd-jwt schema"


def test_an_unknown_format_is_refused_naming_the_formats(app, client):
    staff = make_staff(app)
    response = create(client, staff, {**VC_BODY, "format": "ldp_vc"})
    assert response.status_code == 400
    message = response.get_json()["error"]
    assert all(name in message for name in ("dc+sd-jwt", "mso_mdoc", "jwt_vc_json")), message


def test_changing_the_format_clears_the_other_formats_identifiers(app, client):
    staff = make_staff(app)
    schema = create(client, staff, MDOC_BODY).get_json()
    changed = client.put(
        f"/schemas/{schema['id']}",
        json={"format": "dc+sd-jwt", "vct": "urn:club", "attributes": [{"name": "n"}]},
        headers=staff.headers(),
    ).get_json()
    assert (changed["format"], changed["vct"], changed["doctype"], changed["namespace"]) == (
        "dc+sd-jwt",
        "urn:club",
        None,
        None,
    )


def test_the_mdl_and_the_eu_pid_ship_as_mdocs(app, client):
    staff = make_staff(app)
    mdl = client.get(f"/schemas/{MDL_ID}", headers=staff.headers()).get_json()
    assert (mdl["format"], mdl["doctype"], mdl["namespace"]) == (
        "mso_mdoc",
        "org.iso.18013.5.1.mDL",
        "org.iso.18013.5.1",
    )
    names = {a["name"] for a in mdl["attributes"]}
    assert {"family_name", "given_name", "birth_date", "age_over_18", "age_over_21"} <= names
    assert {"issuing_country", "document_number"} <= names
    pid = client.get(f"/schemas/{PID_MDOC_ID}", headers=staff.headers()).get_json()
    assert (pid["format"], pid["doctype"]) == ("mso_mdoc", "eu.europa.ec.eudi.pid.1")
    formats = {spec.get("format", SD_JWT_VC) for spec in PUBLIC_SCHEMAS}
    assert formats == {SD_JWT_VC, MSO_MDOC}


def test_seeding_again_brings_shipped_schemas_up_to_date(app):
    with app.app_context():
        schema = db.session.get(Schema, uuid.UUID(MDL_ID))
        schema.doctype, schema.name = "old", "Old name"
        db.session.commit()
        assert seed_public_schemas() == 0
        db.session.commit()
        schema = db.session.get(Schema, uuid.UUID(MDL_ID))
        assert (schema.doctype, schema.name) == (
            "org.iso.18013.5.1.mDL",
            "Mobile driving licence (mdoc)",
        )


def test_an_mdoc_schema_issues_credentials(app, client):
    """mdoc is issued too (tests/issuance/test_issuance_formats.py takes one to VERIFIED)."""
    from issuance.issuance_support import _recipient

    staff = make_staff(app)
    response = client.post(
        "/credentials",
        json={
            "name": "Licence",
            "schema_id": MDL_ID,
            "recipient_id": _recipient(app, staff.organization_id),
            "claims": [{"name": "given_name", "value": "Erika"}],
        },
        headers=staff.headers(),
    )
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["offer_url"].startswith("openid-credential-offer://")
