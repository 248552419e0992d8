"""An intermediary holds one access certificate per relying party it acts for, and each of
its verifications names the relying party it is for: that party's certificate signs the
verification's requests, under the party's name.
"""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID
from factories import Staff, make_staff, make_verification, verification_body
from identity_support import Registrar
from wallets import read_request

PARTY = "Beta Shop"


@pytest.fixture
def registrar() -> Registrar:
    return Registrar()


@pytest.fixture
def broker(app) -> Staff:
    return make_staff(app, "ida@broker.test", org_name="Broker IDV")


def certificate_for(client, staff: Staff, registrar: Registrar, **body) -> x509.Certificate:
    made = client.post(
        "/verifier-identity/signing-request",
        json={"country": "NL", **body},
        headers=staff.headers(),
    )
    assert made.status_code == 201, made.get_json()
    leaf = registrar.issue(made.get_json()["csr_pem"])
    upload = {"chain_pem": registrar.chain_pem(leaf)}
    if "relying_party" in body:
        upload["relying_party"] = body["relying_party"]
    taken = client.put("/verifier-identity/certificate", json=upload, headers=staff.headers())
    assert taken.status_code == 200, taken.get_json()
    return leaf


def client_id_of_request(client, verification: dict, customer_id: str) -> str:
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": verification["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    return read_request(client, link).client_id


def hash_id(cert: x509.Certificate) -> str:
    digest = hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).digest()
    return "x509_hash:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_each_relying_party_has_its_certificate_and_its_verifications_carry_it(
    client, broker, registrar
):
    own = certificate_for(client, broker, registrar)
    party = certificate_for(client, broker, registrar, relying_party=PARTY)
    (name,) = party.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert name.value == PARTY

    shown = client.get("/verifier-identity", headers=broker.headers()).get_json()
    assert shown["certificate"]["client_id"] == hash_id(own)
    [listed] = shown["relying_parties"]
    assert (listed["name"], listed["certificate"]["client_id"]) == (PARTY, hash_id(party))

    for_party = make_verification(client, broker, relying_party=PARTY)
    assert for_party["relying_party"] == PARTY
    assert client_id_of_request(client, for_party, "crm-1") == hash_id(party)
    for_itself = make_verification(client, broker)
    assert for_itself["relying_party"] is None
    assert client_id_of_request(client, for_itself, "crm-2") == hash_id(own)

    back = client.patch(
        f"/verifications/{for_party['id']}", json={"relying_party": ""}, headers=broker.headers()
    )
    assert back.status_code == 200 and back.get_json()["relying_party"] is None
    assert client_id_of_request(client, for_party, "crm-3") == hash_id(own)


def test_a_relying_party_without_a_certificate_in_use_gets_the_deployments_identity(
    client, broker, registrar
):
    certificate_for(client, broker, registrar)
    certificate_for(client, broker, registrar, relying_party=PARTY)
    verification = make_verification(client, broker, relying_party=PARTY)
    stopped = client.delete(
        "/verifier-identity/certificate",
        query_string={"relying_party": PARTY},
        headers=broker.headers(),
    )
    assert stopped.status_code == 204
    assert client_id_of_request(client, verification, "crm-1").startswith("redirect_uri:")
    shown = client.get("/verifier-identity", headers=broker.headers()).get_json()
    assert shown["certificate"] is not None  # the intermediary's own is untouched


def test_a_verification_for_an_unknown_relying_party_is_refused(client, broker):
    response = client.post(
        "/verifications",
        json={**verification_body(), "relying_party": "Nobody Ltd"},
        headers=broker.headers(),
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "UNKNOWN_RELYING_PARTY")


def test_another_organization_cannot_name_the_intermediarys_relying_party(
    app, client, broker, registrar
):
    certificate_for(client, broker, registrar, relying_party=PARTY)
    other = make_staff(app, "olga@other.test", org_name="Other")
    response = client.post(
        "/verifications",
        json={**verification_body(), "relying_party": PARTY},
        headers=other.headers(),
    )
    assert (response.status_code, response.get_json()["code"]) == (400, "UNKNOWN_RELYING_PARTY")
