"""Every format the verifier reads is issued too: mdoc (``mso_mdoc``) and W3C VC-JWT
(``jwt_vc_json``) beside SD-JWT VC.

Each credential is taken over OpenID4VCI's pre-authorized code flow, checked by libraries
written by others (an mdoc by @owf/mdoc as the wallet that presents it, then by @owf/mdoc's
Verifier and @auth0/mdl as readers; a VC-JWT by did-jwt-vc), then presented to this deployment's own verifier, which says
VERIFIED. An mdoc's issuer is trusted by the organization's IACA root, downloaded from the
issuer and pinned in the verification as PEM. The status of either is read from the
deployment's database, as for its SD-JWT VCs, so a revocation FAILs the next presentation;
the lists other verifiers fetch (the CWT form for mdoc, a Bitstring Status List credential for
VC-JWT) are checked here too.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from issuance.issuance_support import Org, Wallet, issue, local, make_org, receive
from support.npm import ensure_node_modules
from wallets import post_response, read_request

TESTS = Path(__file__).resolve().parent.parent
MDOC, ISO_MDOC, VCJWT = TESTS / "mdoc", TESTS / "iso_mdoc", TESTS / "vcjwt"
DOCTYPE = "org.example.diploma.1"
NAMESPACE = "org.example.diploma.1"
MDOC_DIPLOMA = {
    "name": "Diploma (mdoc)",
    "description": "A degree, as an mdoc",
    "format": "mso_mdoc",
    "doctype": DOCTYPE,
    "namespace": NAMESPACE,
    "attributes": [
        {"name": "given_name", "description": "Given name", "type": "TEXT"},
        {"name": "degree", "description": "Degree", "type": "TEXT"},
        {"name": "grade", "description": "Grade", "type": "NUMBER"},
    ],
}
VC_DIPLOMA = {
    "name": "Diploma (VC)",
    "description": "A degree, as a W3C credential",
    "format": "jwt_vc_json",
    "types": ["VerifiableCredential", "UniversityDegreeCredential"],
    "attributes": MDOC_DIPLOMA["attributes"],
}
CLAIMS = [
    {"name": "given_name", "value": "Ada"},
    {"name": "degree", "value": "Mathematics"},
    {"name": "grade", "value": 17},
]
MDOC_DIPLOMA_WITH_VALIDITY = {**MDOC_DIPLOMA, "validity_days": 30}


def publish(client, org: Org, schema: dict[str, Any]) -> str:
    created = client.post("/schemas", json=schema, headers=org.headers)
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    published = client.post(f"/schemas/{schema_id}/publish", headers=org.headers)
    assert published.status_code == 200, published.get_json()
    return schema_id


def take(client, org: Org, schema_id: str, wallet: Wallet) -> tuple[dict[str, Any], str]:
    credential = issue(client, org, schema_id=schema_id, claims=CLAIMS)
    return credential, receive(client, org, wallet, credential)


def node(folder: Path, script: str, package: str, job: dict[str, Any]) -> dict[str, Any]:
    ensure_node_modules(folder, package)
    done = subprocess.run(
        [shutil.which("node") or "node", str(folder / script)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def open_individual(client, verification_id: str, customer: str):
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": customer, "verification_id": verification_id},
    ).get_json()
    connect = client.get(f"/verifications/{individual['id']}/connect").get_json()
    return individual, read_request(client, connect["connection_url"])


def owf_verify(device_response: str, transcript_hex: str, trusted: list[str]) -> dict[str, Any]:
    """@owf/mdoc's Verifier.verifyDeviceResponse over a DeviceResponse, ``trusted`` the IACA
    roots: the checks it failed and passed, and the elements of each document it read."""
    return node(
        MDOC,
        "owf_mdoc.mjs",
        "@owf/mdoc",
        {
            "verify": True,
            "device_response": device_response,
            "transcript_hex": transcript_hex,
            "trusted_pems": trusted,
        },
    )


def present_mdoc(
    client,
    verification_id: str,
    customer: str,
    issued: str,
    wallet: Wallet,
    iaca: str,
    other_iaca: str | None = None,
):
    """@owf/mdoc answers the request with our mdoc (its device signature over the request's
    OpenID4VPHandover); @owf/mdoc's verifier and @auth0/mdl check that same answer against the
    IACA (the first refuses it under ``other_iaca``, when given); then our verifier."""
    individual, request = open_individual(client, verification_id, customer)
    job = {
        "issuer_signed": issued,
        "doctype": DOCTYPE,
        "disclose": {NAMESPACE: ["given_name", "degree", "grade"]},
        "device_key_pem": wallet.key.export_to_pem(private_key=True, password=None).decode(),
        "client_id": request.client_id,
        "nonce": request.nonce,
        "response_uri": request.response_uri,
    }
    device_response = node(MDOC, "owf_mdoc.mjs", "@owf/mdoc", job)["vp_token"]
    transcript = node(MDOC, "owf_mdoc.mjs", "@owf/mdoc", {**job, "transcript_only": True})
    read = node(
        ISO_MDOC,
        "verify_mdoc.mjs",
        "@auth0/mdl",
        {
            "device_response": device_response,
            # @auth0/mdl reads the SessionTranscript as a tag-24 data item.
            "transcript_hex": cbor2.dumps(
                cbor2.CBORTag(24, bytes.fromhex(transcript["transcript_hex"]))
            ).hex(),
            "trusted_pems": [iaca],
        },
    )
    assert read["doctype"] == DOCTYPE
    assert read["namespaces"][NAMESPACE] == {
        "given_name": "Ada",
        "degree": "Mathematics",
        "grade": 17,
    }
    verified = owf_verify(device_response, transcript["transcript_hex"], [iaca])
    assert verified["failed"] == [], verified["failed"]
    for check in (
        "Issuer certificate must be valid",
        "Issuer auth signature is invalid",  # the library's name for the passed signature check
        "Device signature must be valid",
        "The MSO must be valid at the time of verification",
    ):
        assert check in verified["passed"], verified["passed"]
    assert [document["doctype"] for document in verified["documents"]] == [DOCTYPE]
    assert verified["documents"][0]["namespaces"] == {
        NAMESPACE: {"given_name": "Ada", "degree": "Mathematics", "grade": 17}
    }
    if other_iaca is not None:
        refused = owf_verify(device_response, transcript["transcript_hex"], [other_iaca])
        assert [failed.split(":")[0] for failed in refused["failed"]] == [
            "Issuer certificate must be valid"
        ], refused
    answered = post_response(client, request, device_response)
    assert answered.status_code == 200, answered.get_data(as_text=True)
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def test_an_mdoc_schema_is_an_mso_mdoc_configuration(serve) -> None:
    served = serve()
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, MDOC_DIPLOMA)

    metadata = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()

    configuration = metadata["credential_configurations_supported"][schema_id]
    assert configuration["format"] == "mso_mdoc"
    assert configuration["doctype"] == DOCTYPE
    assert "vct" not in configuration
    assert configuration["cryptographic_binding_methods_supported"] == ["cose_key"]
    assert configuration["credential_signing_alg_values_supported"] == [-7]
    assert list(configuration["proof_types_supported"]) == ["jwt"]
    paths = [claim["path"] for claim in configuration["credential_metadata"]["claims"]]
    assert paths == [[NAMESPACE, "given_name"], [NAMESPACE, "degree"], [NAMESPACE, "grade"]]


def test_a_w3c_schema_is_a_jwt_vc_json_configuration(serve) -> None:
    served = serve()
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, VC_DIPLOMA)

    metadata = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()

    configuration = metadata["credential_configurations_supported"][schema_id]
    assert configuration["format"] == "jwt_vc_json"
    assert configuration["credential_definition"] == {"type": VC_DIPLOMA["types"]}
    assert configuration["credential_signing_alg_values_supported"] == ["ES256"]
    paths = [claim["path"] for claim in configuration["credential_metadata"]["claims"]]
    assert paths[0] == ["credentialSubject", "given_name"]


def test_the_iaca_and_document_signer_follow_annex_b(serve) -> None:
    served = serve(ISSUER_COUNTRY="NL")
    client = served.app.test_client()
    org = make_org(served.app)

    response = client.get(f"/issuers/{org.id}/iaca")

    assert response.status_code == 200
    assert response.mimetype == "application/x-pem-file"
    iaca = x509.load_pem_x509_certificate(response.data)
    assert iaca.subject == iaca.issuer
    country = iaca.subject.get_attributes_for_oid(x509.NameOID.COUNTRY_NAME)[0].value
    organization = iaca.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)[0].value
    assert (country, organization) == ("NL", "Acme")
    constraints = iaca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca and constraints.value.path_length == 0
    usage = iaca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and not usage.digital_signature
    # The same root on every download: made once.
    assert client.get(f"/issuers/{org.id}/iaca").data == response.data


def test_an_issued_mdoc_is_verified_by_owf_and_auth0_and_by_us_until_revoked(serve) -> None:
    """The status is read from the database (no fetch: TRUST_ALLOW_PRIVATE off). @owf/mdoc's
    verifier refuses the same answer when only another organization's IACA is trusted."""
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    wallet = Wallet()
    credential, issued = take(client, org, schema_id, wallet)
    iaca = client.get(f"/issuers/{org.id}/iaca").get_data(as_text=True)
    signer = _document_signer(issued)
    assert signer.issuer == x509.load_pem_x509_certificate(iaca.encode()).subject
    eku = signer.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    assert eku.critical and [oid.dotted_string for oid in eku.value] == ["1.0.18013.5.1.2"]

    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": schema_id,
            "claims": ["given_name", "degree"],
            "attributes": [{"name": "grade", "operator": "BIGGER", "value": 10}],
            "trusted_issuers": [iaca],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    verification_id = verification.get_json()["id"]

    other = make_org(served.app, email="registrar@other.test", name="Other")
    other_iaca = client.get(f"/issuers/{other.id}/iaca").get_data(as_text=True)
    assert other_iaca != iaca
    verified = present_mdoc(
        client, verification_id, "graduate-1", issued, wallet, iaca, other_iaca=other_iaca
    )
    assert verified["status"] == "VERIFIED", verified

    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.get_json()["status"] == "REVOKED"
    failed = present_mdoc(client, verification_id, "graduate-2", issued, wallet, iaca)
    assert failed["status"] == "FAILED", failed
    assert failed["validation_error"] == "Credential has been revoked by its issuer"


def test_the_mso_carries_the_proof_key_validity_salts_and_the_cwt_status(serve) -> None:
    served = serve()
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, MDOC_DIPLOMA_WITH_VALIDITY)
    wallet = Wallet()
    _, issued = take(client, org, schema_id, wallet)

    issuer_signed = cbor2.loads(_b64url(issued))
    mso = cbor2.loads(cbor2.loads(issuer_signed["issuerAuth"][2]).value)
    device_key = mso["deviceKeyInfo"]["deviceKey"]
    assert (device_key[-2], device_key[-3]) == (
        _b64url(wallet.public["x"]),
        _b64url(wallet.public["y"]),
    )
    validity = mso["validityInfo"]
    # tdate (tag 0), which cbor2 reads as a datetime.
    assert validity["validUntil"] - validity["signed"] == timedelta(days=30)
    assert validity["signed"].microsecond == 0
    items = [cbor2.loads(item.value) for item in issuer_signed["nameSpaces"][NAMESPACE]]
    assert len({item["random"] for item in items}) == 3
    assert all(len(item["random"]) >= 16 for item in items)
    reference = mso["status"]["status_list"]
    assert reference["uri"] == f"{org.issuer}/status-lists/0"

    cwt = client.get(local(reference["uri"]), headers={"Accept": "application/statuslist+cwt"})
    assert cwt.status_code == 200
    assert cwt.mimetype == "application/statuslist+cwt"
    assert cwt.headers["Vary"] == "Accept"
    sign1 = cbor2.loads(cwt.data)
    assert sign1.tag == 18
    protected, unprotected, payload, signature = sign1.value
    assert cbor2.loads(protected) == {1: -7, 16: "application/statuslist+cwt"}
    # Signed by the document signer of the mdoc (Token Status List §11.3).
    assert unprotected[33] == _document_signer(issued).public_bytes(serialization.Encoding.DER)
    signer = _document_signer(issued).public_key()
    to_be_signed = cbor2.dumps(["Signature1", protected, b"", payload])
    der = encode_dss_signature(
        int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    )
    signer.verify(der, to_be_signed, ec.ECDSA(hashes.SHA256()))
    claims = cbor2.loads(payload)
    assert claims[2] == reference["uri"]
    bits = zlib.decompress(claims[65533]["lst"])
    assert claims[65533]["bits"] == 1
    assert (bits[reference["idx"] // 8] >> (reference["idx"] % 8)) & 1 == 0


def test_an_issued_vc_jwt_is_verified_by_did_jwt_vc_and_by_us_until_revoked(serve) -> None:
    """Our verifier reads our issuer's keys and list from the database: no fetch, which the
    fetcher would refuse here (loopback over http, TRUST_ALLOW_PRIVATE off)."""
    served = serve(TRUST_ALLOW_PRIVATE=False)
    client = served.app.test_client()
    org = make_org(served.app)
    schema_id = publish(client, org, VC_DIPLOMA)
    wallet = Wallet()
    credential, issued = take(client, org, schema_id, wallet)
    jwks = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]

    checked = node(
        VCJWT,
        "verify_vc.mjs",
        "did-jwt-vc",
        {"credential": issued, "issuer": org.issuer, "jwks": jwks},
    )

    payload = checked["payload"]
    assert payload["iss"] == org.issuer
    assert payload["vc"]["type"] == VC_DIPLOMA["types"]
    assert {k: v for k, v in payload["vc"]["credentialSubject"].items() if k != "id"} == {
        "given_name": "Ada",
        "degree": "Mathematics",
        "grade": 17,
    }
    holder = json.loads(_b64url(payload["sub"].removeprefix("did:jwk:")))
    assert (holder["x"], holder["y"]) == (wallet.public["x"], wallet.public["y"])
    entry = payload["vc"]["credentialStatus"]
    assert entry["type"] == "BitstringStatusListEntry"
    assert entry["statusListCredential"] == f"{org.issuer}/status-lists/0/bitstring"

    verification = client.post(
        "/verifications",
        json={
            "name": "Graduates",
            "schema_id": schema_id,
            "claims": ["given_name", "degree"],
            "trusted_issuers": [org.issuer],
        },
        headers=org.headers,
    )
    assert verification.status_code == 201, verification.get_json()
    verification_id = verification.get_json()["id"]
    verified = present_vc(client, verification_id, "graduate-1", issued, wallet)
    assert verified["status"] == "VERIFIED", verified["validation_error"]

    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.get_json()["status"] == "REVOKED"
    listed = client.get(local(entry["statusListCredential"]))
    assert listed.status_code == 200 and listed.mimetype == "application/vc+jwt"
    read = node(
        VCJWT,
        "verify_vc.mjs",
        "did-jwt-vc",
        {
            "status_list": listed.get_data(as_text=True),
            "jwks": jwks,
            "index": int(entry["statusListIndex"]),
        },
    )
    assert read["revoked"] is True
    assert read["payload"]["vc"]["credentialSubject"]["type"] == "BitstringStatusList"
    failed = present_vc(client, verification_id, "graduate-2", issued, wallet)
    assert failed["status"] == "FAILED", failed
    assert failed["validation_error"] == "Credential has been revoked by its issuer"


def present_vc(client, verification_id: str, customer: str, issued: str, wallet: Wallet):
    """did-jwt-vc makes the presentation under the DID the credential names; our verifier."""
    individual, request = open_individual(client, verification_id, customer)
    presentation = node(
        VCJWT,
        "verify_vc.mjs",
        "did-jwt-vc",
        {
            "present": issued,
            "holder_jwk": json.loads(wallet.key.export_private()),
            "audience": request.client_id,
            "nonce": request.nonce,
        },
    )["vp"]
    answered = post_response(client, request, presentation)
    assert answered.status_code == 200, answered.get_data(as_text=True)
    return client.get(f"/verifications/{individual['id']}/verify").get_json()


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _document_signer(issued: str) -> x509.Certificate:
    issuer_auth = cbor2.loads(_b64url(issued))["issuerAuth"]
    return x509.load_der_x509_certificate(issuer_auth[1][33])
