"""A Google Wallet registrar CA whose key is kept in the PKCS#11 token (SoftHSM): the
organizations' leaves are signed inside the token, and still bind their metadata."""

from __future__ import annotations

import base64
import hashlib
import json

from cryptography import x509
from factories import make_staff, make_verification
from verifier_identity.identity_support import GoogleRegistrarCA
from wallets import read_request

from app.hardware_keys import TokenSettings, open_token

RP_METADATA_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.10.1")


def test_the_registrar_key_in_the_token_issues_the_leaf(make_app, softhsm, tmp_path):
    label = "google-registrar"
    token = open_token(TokenSettings(softhsm.module, softhsm.token_label, softhsm.pin))
    ca = GoogleRegistrarCA(ca_key=token.generate_signing_key(label))
    app = make_app(**ca.settings(tmp_path, f"pkcs11:object={label}"), **softhsm.settings())
    client = app.test_client()
    staff = make_staff(app, "carol@gamma.test", org_name="Gamma")
    assert (
        client.put(
            "/verifier-identity/profile",
            json={
                "logo_uri": "https://gamma.test/logo.svg",
                "privacy_policy_uri": "https://gamma.test/p",
            },
            headers=staff.headers(),
        ).status_code
        == 200
    )
    created = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)
    offered = client.get(f"/oid4vp/dc-requests/{request.request_id}").get_json()["requests"][0]
    token_jws = offered["data"]["request"]
    header = json.loads(base64.urlsafe_b64decode(token_jws.split(".")[0] + "=="))
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(ca.ca)
    claims = json.loads(base64.urlsafe_b64decode(token_jws.split(".")[1] + "=="))
    encoded = claims["client_metadata"]["gw_rp_metadata_bytes"]
    metadata = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    bound = leaf.extensions.get_extension_for_oid(RP_METADATA_OID).value.value
    assert bound == b"\x04\x20" + hashlib.sha256(metadata).digest()
