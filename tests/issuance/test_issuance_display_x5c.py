"""What wallets show and how they know who signed: SD-JWT VC Type Metadata at the ``vct`` URL
(draft-ietf-oauth-sd-jwt-vc §6) with ``vct#integrity`` in the credential, the display members
of the issuer metadata, and the organization's certificate chain as ``x5c`` (HAIP 1.0 §6.1.1)
in credentials and status list tokens, checked by libraries we did not write: PyPI ``sd-jwt``
and npm ``@sd-jwt/sd-jwt-vc`` with node's X.509 verifier."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from issuance.issuance_support import DIPLOMA, Wallet, issue, make_org, receive
from issuance.node_client import run
from jwcrypto import jwk
from sd_jwt.verifier import SDJWTVerifier

SHOWN = {
    "background_color": "#12107C",
    "text_color": "#FFFFFF",
    "logo_uri": "https://verity.test/static/diploma.png",
    "logo_alt_text": "The university's seal",
}


def segment(token: str, index: int) -> dict:
    part = token.split("~")[0].split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def shown_org(app, client):
    """An organization whose diploma schema has no vct of its own and says how it looks."""
    org = make_org(app)
    body = {**{k: v for k, v in DIPLOMA.items() if k != "vct"}, "name": "Degree", **SHOWN}
    created = client.post("/schemas", json=body, headers=org.headers)
    assert created.status_code == 201, created.get_json()
    schema = created.get_json()
    assert client.post(f"/schemas/{schema['id']}/publish", headers=org.headers).status_code == 200
    org.schema_id = schema["id"]
    return org, schema


def root_of(client, org) -> x509.Certificate:
    response = client.get("/issuer/certificate", headers=org.headers)
    assert response.status_code == 200, response.get_json()
    return x509.load_pem_x509_certificate(response.get_json()["root_pem"].encode())


def chained_key(header: dict, iss: str, root: x509.Certificate) -> ec.EllipticCurvePublicKey:
    """The leaf's key once the x5c chain is checked against the root, as a verifier would."""
    chain = [x509.load_der_x509_certificate(base64.b64decode(c)) for c in header["x5c"]]
    assert root not in chain  # HAIP 1.0 §6.1.1: the trust anchor is not sent
    for cert, signer in zip(chain, [*chain[1:], root], strict=True):
        cert.verify_directly_issued_by(signer)
    san = chain[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert iss in san.get_values_for_type(x509.UniformResourceIdentifier)
    return chain[0].public_key()


def test_a_new_schema_gets_a_vct_under_the_deployment_where_its_type_metadata_is(
    app, client
) -> None:
    _, schema = shown_org(app, client)
    assert schema["vct"] == f"https://verity.test/types/{schema['id']}"
    assert {name: schema[name] for name in SHOWN} == SHOWN

    response = client.get(f"/types/{schema['id']}")

    assert response.status_code == 200 and response.mimetype == "application/json"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    metadata = response.get_json()
    assert metadata["vct"] == schema["vct"] and metadata["name"] == "Degree"
    assert metadata["description"] == DIPLOMA["description"]
    (display,) = metadata["display"]
    assert display["locale"] == "en" and display["name"] == "Degree"
    assert display["rendering"]["simple"] == {
        "logo": {"uri": SHOWN["logo_uri"], "alt_text": SHOWN["logo_alt_text"]},
        "background_color": "#12107C",
        "text_color": "#FFFFFF",
    }
    claims = {tuple(c["path"]): c for c in metadata["claims"]}
    assert claims[("given_name",)]["display"] == [{"locale": "en", "label": "Given name"}]
    assert claims[("address", "country")]["display"][0]["label"] == "Country"
    assert {c["sd"] for c in metadata["claims"]} == {"always"}


def test_type_metadata_of_a_vct_served_nowhere_here_is_404(app, client) -> None:
    make_org(app)  # its schema's vct is https://credentials.example.test/diploma
    for path in ("/types/unknown", "/types/" + "0" * 32):
        response = client.get(path)
        assert response.status_code == 404
        assert response.get_json()["error"] == "not_found"


def test_the_credential_carries_the_integrity_of_the_bytes_served_and_its_x5c_verifies(
    app, client
) -> None:
    org, schema = shown_org(app, client)
    wallet = Wallet()
    credential = receive(client, org, wallet, issue(client, org))
    header, payload = segment(credential, 0), segment(credential, 1)
    served = client.get(f"/types/{schema['id']}").data

    assert payload["vct"] == schema["vct"]
    digest = base64.b64encode(hashlib.sha256(served).digest()).decode()
    assert payload["vct#integrity"] == f"sha256-{digest}"

    # PyPI sd-jwt verifies with the key of the x5c leaf, chained to the organization root.
    key = chained_key(header, payload["iss"], root_of(client, org))
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    verified = SDJWTVerifier(
        credential, lambda issuer, _header: jwk.JWK.from_pem(pem), serialization_format="compact"
    ).get_verified_payload()
    assert verified["given_name"] == "Ada" and verified["vct#integrity"].startswith("sha256-")
    # The jwt-vc-issuer route stays: the same key is published under the header's kid.
    published = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()
    assert [k["kid"] for k in published["jwks"]["keys"]] == [header["kid"]]


def test_changed_display_changes_the_metadata_and_the_next_credentials_integrity(
    app, client
) -> None:
    org, schema = shown_org(app, client)
    before = segment(receive(client, org, Wallet(), issue(client, org)), 1)["vct#integrity"]
    changed = client.put(
        f"/schemas/{schema['id']}", json={"background_color": "#000000"}, headers=org.headers
    )
    assert changed.status_code == 200, changed.get_json()
    after = segment(receive(client, org, Wallet(), issue(client, org)), 1)["vct#integrity"]
    served = client.get(f"/types/{schema['id']}").data
    assert before != after
    assert after == "sha256-" + base64.b64encode(hashlib.sha256(served).digest()).decode()


def badge_schema(client, org, **fields) -> object:
    body = {**DIPLOMA, "name": "Badge", "vct": "https://verity.test/types/badge", **fields}
    return client.post("/schemas", json=body, headers=org.headers)


def test_a_custom_type_address_serves_its_schema_and_one_organization_holds_it(app, client) -> None:
    acme = make_org(app)
    created = badge_schema(client, acme)
    assert created.status_code == 201, created.get_json()
    badge = created.get_json()
    assert client.post(f"/schemas/{badge['id']}/publish", headers=acme.headers).status_code == 200
    acme.schema_id = badge["id"]

    served = client.get("/types/badge")
    assert served.status_code == 200 and served.get_json()["name"] == "Badge"
    payload = segment(receive(client, acme, Wallet(), issue(client, acme)), 1)
    assert payload["vct"] == "https://verity.test/types/badge"
    digest = base64.b64encode(hashlib.sha256(served.data).digest()).decode()
    assert payload["vct#integrity"] == f"sha256-{digest}"

    # Globex cannot take the address, neither at creation nor by changing a schema's vct:
    # its credentials would carry an integrity the document served does not match.
    globex = make_org(app, "registrar@globex.test", name="Globex")
    refused = badge_schema(client, globex, name="Globex badge")
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "VCT_TAKEN"
    draft = badge_schema(
        client, globex, name="Globex draft", vct="https://verity.test/types/globex-draft"
    )
    assert draft.status_code == 201, draft.get_json()
    moved = client.put(
        f"/schemas/{draft.get_json()['id']}",
        json={"vct": "https://verity.test/types/badge"},
        headers=globex.headers,
    )
    assert moved.status_code == 400 and moved.get_json()["code"] == "VCT_TAKEN"
    # A published schema's vct does not move at all.
    frozen = client.put(
        f"/schemas/{globex.schema_id}",
        json={"vct": "https://verity.test/types/badge"},
        headers=globex.headers,
    )
    assert frozen.status_code == 409 and frozen.get_json()["code"] == "SCHEMA_PUBLISHED"
    assert client.get("/types/badge").data == served.data
    # Acme may still change its own schema, and a vct served elsewhere stays shareable.
    kept = client.put(
        f"/schemas/{badge['id']}", json={"description": "A badge"}, headers=acme.headers
    )
    assert kept.status_code == 200, kept.get_json()
    shared = badge_schema(client, globex, vct=DIPLOMA["vct"])
    assert shared.status_code == 201, shared.get_json()


def test_a_credential_with_a_vct_of_its_own_carries_no_integrity(app, client) -> None:
    org = make_org(app)
    payload = segment(receive(client, org, Wallet(), issue(client, org)), 1)
    assert payload["vct"] == DIPLOMA["vct"] and "vct#integrity" not in payload


def test_issuer_metadata_shows_the_organization_and_each_configurations_look(app, client) -> None:
    org, schema = shown_org(app, client)
    logo = "https://verity.test/static/acme.png"
    put = client.put("/verifier-identity/profile", json={"logo_uri": logo}, headers=org.headers)
    assert put.status_code == 200, put.get_json()

    metadata = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()

    assert metadata["display"] == [
        {"name": "Acme", "locale": "en", "logo": {"uri": logo, "alt_text": "Acme"}}
    ]
    configuration = metadata["credential_configurations_supported"][schema["id"]]
    assert configuration["vct"] == schema["vct"]
    (display,) = configuration["credential_metadata"]["display"]
    assert display["name"] == "Degree" and display["locale"] == "en"
    assert display["background_color"] == "#12107C" and display["text_color"] == "#FFFFFF"
    assert display["logo"] == {"uri": SHOWN["logo_uri"], "alt_text": SHOWN["logo_alt_text"]}
    labels = {
        tuple(c["path"]): c["display"] for c in configuration["credential_metadata"]["claims"]
    }
    assert labels[("family_name",)] == [{"name": "Family name", "locale": "en"}]


def test_display_fields_are_checked_and_cleared_by_null(app, client) -> None:
    org, _ = shown_org(app, client)
    for field, bad in (("background_color", "blue"), ("logo_uri", "http://x.test/l.png")):
        body = {**DIPLOMA, field: bad}
        refused = client.post("/schemas", json=body, headers=org.headers)
        assert refused.status_code == 400, (field, refused.get_json())
    draft = client.post("/schemas", json={**DIPLOMA, **SHOWN}, headers=org.headers).get_json()
    cleared = client.put(
        f"/schemas/{draft['id']}", json={"text_color": None}, headers=org.headers
    ).get_json()
    assert cleared["text_color"] is None and cleared["background_color"] == "#12107C"


def test_status_list_tokens_carry_the_same_chain(app, client) -> None:
    org, _ = shown_org(app, client)
    credential = receive(client, org, Wallet(), issue(client, org))
    token = client.get(org.path("/status-lists/0")).data.decode()
    header = segment(token, 0)
    assert header["x5c"] == segment(credential, 0)["x5c"]
    chained_key(header, org.issuer, root_of(client, org))


def test_a_rotated_key_gets_a_new_issuing_certificate_under_the_same_root(app, client) -> None:
    org, _ = shown_org(app, client)
    before = segment(receive(client, org, Wallet(), issue(client, org)), 0)
    rotated = app.test_cli_runner().invoke(args=["issuers", "rotate-key", org.id])
    assert rotated.exit_code == 0, rotated.output
    after = segment(receive(client, org, Wallet(), issue(client, org)), 0)
    root = root_of(client, org)
    assert after["kid"] != before["kid"] and after["x5c"] != before["x5c"]
    chained_key(before, org.issuer, root)
    chained_key(after, org.issuer, root)


def _ca_chain(issuer_key_jwk: dict, issuer: str, leaf_key=None) -> tuple[str, x509.Certificate]:
    """A chain an organization's own CA would hand out: root -> intermediate -> issuer."""
    now = datetime.now(UTC)

    def certificate(subject, issuer_name, public, signer, ca, san=None):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=1))
            .not_valid_after(now + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if san:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.UniformResourceIdentifier(san)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    root_key, middle_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    public = leaf_key or jwk.JWK(**issuer_key_jwk).get_op_key("verify")
    root = certificate("Acme CA", "Acme CA", root_key.public_key(), root_key, True)
    middle = certificate("Acme issuing CA", "Acme CA", middle_key.public_key(), root_key, True)
    leaf = certificate("Acme issuer", "Acme issuing CA", public, middle_key, False, issuer)
    pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (leaf, middle, root))
    return pem.decode(), root


def test_staff_upload_a_chain_from_their_ca_and_credentials_carry_it(app, client) -> None:
    org, _ = shown_org(app, client)
    receive(client, org, Wallet(), issue(client, org))  # the organization has a key now
    (key,) = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]["keys"]
    chain_pem, root = _ca_chain(key, org.issuer)

    uploaded = client.put("/issuer/certificate", json={"chain_pem": chain_pem}, headers=org.headers)

    assert uploaded.status_code == 200, uploaded.get_json()
    assert uploaded.get_json()["uploaded"] is True
    header = segment(receive(client, org, Wallet(), issue(client, org)), 0)
    assert len(header["x5c"]) == 2  # the issuer's certificate and the intermediate
    chained_key(header, org.issuer, root)


def test_a_chain_for_another_key_or_issuer_is_refused(app, client) -> None:
    org, _ = shown_org(app, client)
    receive(client, org, Wallet(), issue(client, org))
    (key,) = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]["keys"]
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    for chain_pem, _root in (
        _ca_chain(key, org.issuer, leaf_key=other),
        _ca_chain(key, "https://elsewhere.test/issuers/1"),
    ):
        refused = client.put(
            "/issuer/certificate", json={"chain_pem": chain_pem}, headers=org.headers
        )
        assert refused.status_code == 400
        assert refused.get_json()["code"] == "INVALID_CERTIFICATE_CHAIN"


def test_an_independent_wallet_verifies_credential_and_status_list_by_x5c(serve) -> None:
    served = serve()
    client = served.app.test_client()
    org, _ = shown_org(served.app, client)
    root_pem = client.get("/issuer/certificate", headers=org.headers).get_json()["root_pem"]
    credential = issue(client, org)

    received = run(
        {"action": "receive", "offer_url": credential["offer_url"], "root_pem": root_pem}
    )

    assert received["x5c"] and received["status"] == 0
    assert received["claims"]["given_name"] == "Ada"
    assert (
        client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers).status_code
        == 200
    )
    again = run({"action": "verify", "credential": received["credential"], "root_pem": root_pem})
    assert again["status"] == 1
    # Another root: the chain leads nowhere the verifier trusts.
    other_pem = _ca_chain(
        {"kty": "EC"}, org.issuer, ec.generate_private_key(ec.SECP256R1()).public_key()
    )[1]
    try:
        run(
            {
                "action": "verify",
                "credential": received["credential"],
                "root_pem": other_pem.public_bytes(serialization.Encoding.PEM).decode(),
            }
        )
    except AssertionError as exc:
        assert "not signed by the next one" in str(exc)
    else:
        raise AssertionError("a chain to another root verified")
