"""Issuer keys and the request-signing key kept in a PKCS#11 token (SoftHSM2): credentials,
status lists and request objects are signed by the token, and the private keys never leave it.
"""

from __future__ import annotations

import base64
import json
import uuid

import pkcs11
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from factories import make_staff, make_verification
from issuance.issuance_support import Wallet, issue, make_org, receive
from joserfc import jws
from joserfc.jwk import ECKey
from pkcs11 import Attribute, ObjectClass
from signing_certificates import HOST, make_pki, pem
from wallets import read_request

from app.extensions import db
from app.hardware_keys import TokenKeyError, TokenSettings, open_token
from app.issuance.models import IssuerKey, IssuerRoot
from app.sdjwt.jws import read_unverified


@pytest.fixture
def token_app(make_app, softhsm):
    return make_app(KEY_STORE="pkcs11", **softhsm.settings())


def verify_es256(token: str, jwk: dict) -> dict:
    """The signature checked by joserfc (a JOSE library we did not write)."""
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 16_384
    verified = jws.deserialize_compact(token, ECKey.import_key(jwk), registry=registry)
    return json.loads(verified.payload)


def private_objects(softhsm, label: str) -> list:
    """What the token says of the private key: (sensitive, extractable, value readable)."""
    token = pkcs11.lib(softhsm.module).get_token(token_label=softhsm.token_label)
    try:
        session = token.open(user_pin=softhsm.pin)
    except pkcs11.exceptions.UserAlreadyLoggedIn:  # the service's session logged this process in
        session = token.open()
    with session:
        found = list(
            session.get_objects({Attribute.CLASS: ObjectClass.PRIVATE_KEY, Attribute.LABEL: label})
        )
        return [
            (obj[Attribute.SENSITIVE], obj[Attribute.EXTRACTABLE], _value_readable(obj))
            for obj in found
        ]


def _value_readable(obj) -> bool:
    try:
        obj[Attribute.VALUE]
    except pkcs11.exceptions.AttributeSensitive:
        return False
    return True


def test_credentials_and_status_lists_are_signed_in_the_token(token_app, softhsm):
    org = make_org(token_app)
    client = token_app.test_client()
    credential = issue(client, org)
    sd_jwt = receive(client, org, Wallet(), credential)

    with token_app.app_context():
        key = db.session.query(IssuerKey).one()
        assert key.sealed_private_key is None and key.token_key_label
        label, jwk = key.token_key_label, key.public_jwk
    issuer_signed = sd_jwt.split("~")[0]
    assert read_unverified(issuer_signed)[0]["kid"] == jwk["kid"]
    assert verify_es256(issuer_signed, jwk)["iss"] == org.issuer

    status_list = client.get(org.path("/status-lists/0"))
    assert status_list.status_code == 200
    assert verify_es256(status_list.get_data(as_text=True), jwk)["sub"].endswith("/0")

    assert private_objects(softhsm, label) == [(True, False, False)]


def test_a_token_key_refuses_to_give_its_private_value(token_app, softhsm):
    org = make_org(token_app)
    client = token_app.test_client()
    receive(client, org, Wallet(), issue(client, org))
    with token_app.app_context():
        label = db.session.query(IssuerKey).one().token_key_label
    key = open_token(TokenSettings(softhsm.module, softhsm.token_label, softhsm.pin)).signing_key(
        label
    )
    with pytest.raises(TokenKeyError):
        key.private_numbers()
    with pytest.raises(TokenKeyError):
        key.private_bytes()
    signature = key.sign(b"signed inside the token", ec.ECDSA(hashes.SHA256()))
    key.public_key().verify(signature, b"signed inside the token", ec.ECDSA(hashes.SHA256()))


def test_rotating_makes_the_next_key_in_the_token_and_both_stay_published(token_app):
    org = make_org(token_app)
    client = token_app.test_client()
    receive(client, org, Wallet(), issue(client, org))
    rotated = token_app.test_cli_runner().invoke(args=["issuers", "rotate-key", org.id])
    assert rotated.exit_code == 0, rotated.output
    second = receive(client, org, Wallet(), issue(client, org))
    with token_app.app_context():
        keys = db.session.query(IssuerKey).order_by(IssuerKey.created_at).all()
        assert [k.sealed_private_key for k in keys] == [None, None]
        current = keys[1].public_jwk
    assert verify_es256(second.split("~")[0], current)["iss"] == org.issuer
    assert len(json.loads(rotated.stdout)["published_kids"]) == 2


def test_request_objects_are_signed_by_a_key_in_the_token(make_app, softhsm, tmp_path):
    label = "request-signing"
    settings = TokenSettings(softhsm.module, softhsm.token_label, softhsm.pin)
    token_key = open_token(settings).generate_signing_key(label)
    pki = make_pki(leaf_key=token_key)
    chain = tmp_path / "chain.pem"
    chain.write_bytes(pem(pki.leaf) + pem(pki.ca))
    app = make_app(
        REQUEST_SIGNING_CERT_FILE=str(chain),
        REQUEST_SIGNING_KEY_FILE=f"pkcs11:token={softhsm.token_label};object={label}",
        **softhsm.settings(),
    )
    client = app.test_client()
    staff = make_staff(app)
    created = make_verification(client, staff)
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    link = client.get(f"/verifications/{individual['id']}/connect").get_json()["connection_url"]
    request = read_request(client, link)

    public_jwk = ECKey.import_key(pki.leaf.public_key()).as_dict()
    assert verify_es256(request.token, public_jwk)["client_id"] == f"x509_san_dns:{HOST}"
    assert private_objects(softhsm, label) == [(True, False, False)]


def test_a_start_naming_a_key_the_token_lacks_stops_with_the_setting(make_app, softhsm, tmp_path):
    pki = make_pki()
    chain = tmp_path / "chain.pem"
    chain.write_bytes(pem(pki.leaf) + pem(pki.ca))
    with pytest.raises(RuntimeError, match=r"REQUEST_SIGNING_KEY_FILE.*no key pair labelled"):
        make_app(
            REQUEST_SIGNING_CERT_FILE=str(chain),
            REQUEST_SIGNING_KEY_FILE="pkcs11:object=not-in-the-token",
            **softhsm.settings(),
        )


def test_key_store_settings_are_checked_at_start(make_app):
    with pytest.raises(RuntimeError, match="KEY_STORE must be one of database, pkcs11"):
        make_app(KEY_STORE="vault")
    with pytest.raises(RuntimeError, match="KEY_STORE=pkcs11 needs PKCS11_MODULE"):
        make_app(KEY_STORE="pkcs11")


def test_the_mdoc_iaca_and_document_signer_keys_are_made_in_the_token(token_app, softhsm, make_app):
    """The IACA certifies the document signer and the signer signs the MSO, both inside the
    token (x509 signing through the same key interface as JWS)."""
    import base64

    import cbor2
    from cryptography import x509
    from issuance.test_issuance_formats import MDOC_DIPLOMA, publish, take

    from app.issuance.models import MdocSigner

    org = make_org(token_app)
    client = token_app.test_client()
    _, issued = take(client, org, publish(client, org, MDOC_DIPLOMA), Wallet())

    with token_app.app_context():
        signer = db.session.query(MdocSigner).one()
        assert signer.sealed_private_key is None and signer.iaca_sealed_private_key is None
        labels = signer.iaca_token_key_label, signer.token_key_label
    iaca = x509.load_pem_x509_certificate(client.get(org.path("/iaca")).data)
    issuer_auth = cbor2.loads(base64.urlsafe_b64decode(issued + "=" * (-len(issued) % 4)))[
        "issuerAuth"
    ]
    document_signer = x509.load_der_x509_certificate(issuer_auth[1][33])
    document_signer.verify_directly_issued_by(iaca)
    for label in labels:
        assert private_objects(softhsm, label) == [(True, False, False)]

    # Not sealed, so a new ISSUER_KEY_SECRET leaves them where they are: counted, not moved.
    from app.issuance import settings as issuing_settings

    with token_app.app_context():
        previous = issuing_settings.current().secret
    resealing = make_app(KEY_STORE="pkcs11", ISSUER_KEY_SECRET="another", **softhsm.settings())
    result = resealing.test_cli_runner().invoke(
        args=["keys", "reseal"], env={"PREVIOUS_ISSUER_KEY_SECRET": previous}
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["mdoc_keys"], report["issuer_keys_in_token"]) == (0, 2)
    with resealing.app_context():
        signer = db.session.query(MdocSigner).one()
        assert (signer.iaca_token_key_label, signer.token_key_label) == labels
        assert signer.sealed_private_key is None and signer.iaca_sealed_private_key is None


def test_an_organizations_own_iaca_certifies_the_document_signer_key_in_the_token(
    token_app, softhsm
):
    """The signing request is signed inside the token, and the uploaded chain signs mdocs with
    that same token key: nothing of the key leaves the token."""
    from issuance.test_issuance_formats import MDOC_DIPLOMA, _document_signer, publish, take
    from issuance.test_mdoc_signer_upload import OwnIaca, pem_of

    from app.issuance.models import MdocSigner

    org = make_org(token_app)
    client = token_app.test_client()
    response = client.get("/issuer/mdoc-signer/signing-request", headers=org.headers)
    csr = x509.load_pem_x509_csr(response.get_json()["csr_pem"].encode())
    assert csr.is_signature_valid
    iaca = OwnIaca.make()
    document_signer = iaca.certify(csr.public_key())  # type: ignore[arg-type]
    uploaded = client.put(
        "/issuer/mdoc-signer",
        json={"chain_pem": pem_of(document_signer, iaca.certificate)},
        headers=org.headers,
    )
    assert uploaded.status_code == 200, uploaded.get_json()

    _, issued = take(client, org, publish(client, org, MDOC_DIPLOMA), Wallet())

    assert _document_signer(issued) == document_signer
    with token_app.app_context():
        label = db.session.query(MdocSigner).one().token_key_label
    assert private_objects(softhsm, label) == [(True, False, False)]


def test_the_root_in_the_token_certifies_the_issuer_key_in_the_token(token_app, softhsm):
    """HAIP 1.0 §6.1.1 with both keys in the token: the root key signs the issuing
    certificate of the issuer key inside the token, and neither private value leaves it."""
    org = make_org(token_app)
    client = token_app.test_client()
    sd_jwt = receive(client, org, Wallet(), issue(client, org))
    header = read_unverified(sd_jwt.split("~")[0])[0]
    root_pem = client.get("/issuer/certificate", headers=org.headers).get_json()["root_pem"]
    root = x509.load_pem_x509_certificate(root_pem.encode())
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(root)
    with token_app.app_context():
        key = db.session.query(IssuerKey).one()
        root_row = db.session.query(IssuerRoot).one()
        assert root_row.sealed_private_key is None and root_row.token_key_label
        assert ECKey.import_key(key.public_jwk).as_dict()["x"] == header_key_x(leaf)
        label = root_row.token_key_label
    assert private_objects(softhsm, label) == [(True, False, False)]


def header_key_x(leaf) -> str:
    numbers = leaf.public_key().public_numbers()
    return base64.urlsafe_b64encode(numbers.x.to_bytes(32, "big")).rstrip(b"=").decode()


# ----------------------------------------------------------------- the did:prism issuing key


def test_the_did_prism_issuing_key_is_made_and_signs_in_the_token(token_app, softhsm):
    """SoftHSM2 makes secp256k1 keys: the ISSUING key is kept there like the other issuer
    keys, and its ES256K signatures (DER from the token, written r||s low-S) verify."""
    from issuance.test_prism_issuer import verify_es256k, verify_independently

    from app.issuance import prism_issuer

    org = make_org(token_app)
    with token_app.app_context():
        token = prism_issuer.sign_credential(uuid.UUID(org.id), {"iss": "x", "n": 1})
        issuer = prism_issuer.existing_prism_issuer(uuid.UUID(org.id))
        db.session.commit()
        assert issuer.sealed_private_key is None and issuer.token_key_label
        label, did = issuer.token_key_label, issuer.did
    assert private_objects(softhsm, label) == [(True, False, False)]
    header, claims = verify_es256k(token, did)
    assert header["kid"] == f"{did}#issuing-0" and claims == {"iss": "x", "n": 1}
    answer = token_app.test_client().get(f"/issuers/{org.id}/credential-status/0")
    assert answer.status_code == 200
    verify_independently(answer.get_json(), did)


def test_a_token_key_the_sdk_refuses_is_destroyed_and_drawn_again(token_app, softhsm, monkeypatch):
    from app.didcomm import prism
    from app.hardware_keys import Token
    from app.issuance import prism_issuer

    made: list[str] = []
    generate = Token.generate_signing_key

    def recorded(self, label, curve="secp256r1"):
        made.append(label)
        return generate(self, label, curve)

    accepts = prism.sdk_accepts
    asked: list[object] = []

    def first_refused(key) -> bool:
        # The token's first key is taken for one the SDK refuses.
        asked.append(key)
        return len(asked) > 1 and accepts(key)

    monkeypatch.setattr(Token, "generate_signing_key", recorded)
    monkeypatch.setattr(prism, "sdk_accepts", first_refused)
    org = make_org(token_app)
    with token_app.app_context():
        issuer = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        db.session.commit()
        assert len(made) == 2 and issuer.token_key_label == made[1]
    assert private_objects(softhsm, made[0]) == []
    assert private_objects(softhsm, made[1]) == [(True, False, False)]


def test_a_token_without_secp256k1_leaves_the_did_prism_key_sealed(token_app, monkeypatch):
    from app.hardware_keys import CurveNotSupported, Token
    from app.issuance import prism_issuer

    def refuses(self, label, curve="secp256r1"):
        raise CurveNotSupported(f"no {curve}")

    monkeypatch.setattr(Token, "generate_signing_key", refuses)
    org = make_org(token_app)
    with token_app.app_context():
        issuer = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        db.session.commit()
        assert issuer.sealed_private_key is not None and issuer.token_key_label is None
