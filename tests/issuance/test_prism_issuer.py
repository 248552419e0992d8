"""Each organization's did:prism issuer (credentials issued over DIDComm): made once on first
use with keys the Identus SDK accepts, signing ES256K JWTs (checked with joserfc) and
StatusList2021 lists that this service's status checker and PyLD with ``cryptography`` accept,
and whose revocations this service's own verifier sees at once, without a fetch."""

from __future__ import annotations

import base64
import gzip
import json
import uuid
from datetime import UTC, datetime

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from issuance.issuance_support import issue, local, make_org
from joserfc import jws
from joserfc.jwk import ECKey
from statuslist.statuslist2021_support import nquads
from support.race import all_at_once

from app.didcomm import prism
from app.extensions import db
from app.issuance import prism_issuer
from app.issuance import settings as issuing_settings
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, PrismIssuer
from app.issuance.own import own_issuers
from app.oid4vci.keys import open_private_key
from app.statuslist import INVALID, VALID, StatusError, check_bitstring_status
from app.statuslist.ldproof import secp256k1_key_uri, sign_secp256k1_2019
from app.statuslist.statuslist2021 import read_list
from app.trust.fetch import Fetcher, TTLCache
from app.trust.issuers import ResolvedIssuer

_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def rejected_key() -> ec.EllipticCurvePrivateKey:
    """A secp256k1 key with a coordinate beginning with a zero byte: the SDK 7.0.0 refuses it."""
    while True:
        key = ec.generate_private_key(ec.SECP256K1())
        if not prism.sdk_accepts(key.public_key()):
            return key


def issuing_jwk(did: str) -> dict:
    document = prism.resolve(did)
    method = next(m for m in document["verificationMethod"] if m["id"] == f"{did}#issuing-0")
    return method["publicKeyJwk"]


def issuing_public_key(did: str) -> ec.EllipticCurvePublicKey:
    return prism.secp256k1_public_key(issuing_jwk(did))


def verify_es256k(token: str, did: str) -> tuple[dict, dict]:
    """The signature checked by joserfc (a JOSE library we did not write)."""
    registry = jws.JWSRegistry(algorithms=["ES256K"])
    registry.max_header_length = 16_384  # the long-form DID is in the kid
    verified = jws.deserialize_compact(token, ECKey.import_key(issuing_jwk(did)), registry=registry)
    return verified.headers(), json.loads(verified.payload)


def resolved(did: str) -> ResolvedIssuer:
    """How a credential of the DID comes out of its verification (``app.trust.did_prism``)."""
    return ResolvedIssuer(prism.parse(did).canonical, issuing_public_key(did), "did:prism")


def credential_row(app, credential_id: str) -> Credential:
    row = db.session.get(Credential, uuid.UUID(credential_id))
    assert row is not None
    return row


def now() -> datetime:
    return datetime.now(UTC)


# ------------------------------------------------------------------------- the DID and its key


def test_the_issuer_is_made_on_first_use_once_per_organization(app):
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Other")
    with app.app_context():
        assert prism_issuer.existing_prism_issuer(uuid.UUID(org.id)) is None
        first = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        again = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        elsewhere = prism_issuer.prism_issuer_of(uuid.UUID(other.id))
        db.session.commit()
        assert first.id == again.id and first.did == again.did
        assert elsewhere.did != first.did
        parsed = prism.parse(first.did)
        assert first.short_form == parsed.canonical
        keys = {key.id: (key.usage, key.curve) for key in parsed.operation.public_keys}
        assert keys == {
            "master-0": (prism.MASTER, "secp256k1"),
            "issuing-0": (prism.ISSUING, "secp256k1"),
        }
        document = first.document()
        assert document["id"] == first.did
        assert document["assertionMethod"] == [f"{first.did}#issuing-0"]
        assert document["authentication"] == []
        assert first.sealed_private_key is not None and first.token_key_label is None


def test_first_uses_at_once_make_one_issuer(app):
    org = make_org(app)
    organization = uuid.UUID(org.id)

    def first_use(_: int) -> str:
        with app.app_context():
            did = prism_issuer.prism_issuer_of(organization).did
            db.session.commit()
            db.session.remove()
            return did

    dids = all_at_once(6, first_use)
    assert len(set(dids)) == 1
    with app.app_context():
        rows = db.session.query(PrismIssuer).filter_by(organization_id=organization).all()
        assert [row.did for row in rows] == dids[:1]


def test_the_loser_of_a_race_to_make_the_issuer_reads_the_winners(app, monkeypatch):
    """Two first uses at once: the second's read found nothing, its insert meets the
    winner's row at the unique organization, and it answers with the winner's DID."""
    org = make_org(app)
    organization = uuid.UUID(org.id)
    with app.app_context():
        winner = prism_issuer.prism_issuer_of(organization).did
        db.session.commit()
    real = prism_issuer.existing_prism_issuer
    reads: list[uuid.UUID] = []

    def first_read_misses(organization_id):
        reads.append(organization_id)
        return None if len(reads) == 1 else real(organization_id)

    monkeypatch.setattr(prism_issuer, "existing_prism_issuer", first_read_misses)
    with app.app_context():
        assert prism_issuer.prism_issuer_of(organization).did == winner
        assert len(reads) == 2  # the miss, then the winner's row after the insert failed
        db.session.commit()
        assert db.session.query(PrismIssuer).filter_by(organization_id=organization).count() == 1


def test_only_keys_the_identus_sdk_accepts_are_used(app):
    """SDK 7.0.0 refuses a key whose x or y begins with a zero byte: such keys are drawn
    again, for the master key and the ISSUING key alike."""
    refused = [rejected_key() for _ in range(3)]
    accepted: list[ec.EllipticCurvePrivateKey] = []

    def draw() -> ec.EllipticCurvePrivateKey:
        if refused:
            return refused.pop()
        key = ec.generate_private_key(ec.SECP256K1())
        accepted.append(key)
        return key

    org = make_org(app)
    with app.app_context():
        issuer = prism_issuer.prism_issuer_of(uuid.UUID(org.id), new_key=draw)
        db.session.commit()
        assert not refused
        for key in prism.parse(issuer.did).operation.public_keys:
            assert key.x[0] != 0 and key.y[0] != 0
            point = ec.EllipticCurvePublicNumbers(
                int.from_bytes(key.x, "big"), int.from_bytes(key.y, "big"), ec.SECP256K1()
            ).public_key()
            assert prism.sdk_accepts(point)
        used = {k.public_key().public_numbers() for k in accepted}
        assert issuing_public_key(issuer.did).public_numbers() in used


def test_a_key_the_sdk_refuses_is_refused_when_given(app):
    with pytest.raises(prism.PrismDidError, match="the SDK accepts"):
        prism.make(given={"issuing-0": rejected_key()})


def test_the_sealed_key_opens_and_signs_credentials_joserfc_verifies(app):
    org = make_org(app)
    payload = {"iss": "x", "sub": "did:prism:holder", "vc": {"credentialSubject": {"a": 1}}}
    with app.app_context():
        token = prism_issuer.sign_credential(uuid.UUID(org.id), payload)
        issuer = prism_issuer.existing_prism_issuer(uuid.UUID(org.id))
        db.session.commit()
        private = open_private_key(issuer.sealed_private_key, issuing_settings.current().kek)
        assert private.public_key().public_numbers() == (
            issuing_public_key(issuer.did).public_numbers()
        )
        did = issuer.did
    header, claims = verify_es256k(token, did)
    assert header == {"alg": "ES256K", "typ": "JWT", "kid": f"{did}#issuing-0"}
    assert claims == payload
    signature = base64.urlsafe_b64decode(token.split(".")[2] + "==")
    assert int.from_bytes(signature[32:], "big") <= _N // 2  # low S
    # The DIDComm verifier's own check agrees: an assertionMethod key of the DID.
    prism.verify_es256k(token, prism.resolve(did), "assertionMethod")


def test_the_status_entry_names_the_credentials_own_bit(app):
    org = make_org(app)
    credential = issue(app.test_client(), org)
    with app.app_context():
        row = credential_row(app, credential["id"])
        entry = prism_issuer.status_entry(row)
        uri = f"{app.config['PUBLIC_URL']}/issuers/{org.id}/credential-status/{row.status_list}"
        assert entry == {
            "id": f"{uri}#{row.status_index}",
            "type": "StatusList2021Entry",
            "statusPurpose": "Revocation",
            "statusListIndex": str(row.status_index),
            "statusListCredential": uri,
        }


# ------------------------------------------------------------------------------ the list served


def verify_independently(document: dict, did: str) -> bytes:
    """The proof as the cloud agent checks it, with PyLD and ``cryptography`` directly; the
    list's bits."""
    proof = document["proof"]
    assert proof["type"] == "EcdsaSecp256k1Signature2019"
    assert proof["proofPurpose"] == "assertionMethod"
    # The key as the cloud agent names it, the only form the Identus SDK reads: a data: URI of
    # standard base64 (the SDK's decoder refuses base64url) holding the DID's ISSUING key.
    prefix, _, encoded = proof["verificationMethod"].partition(",")
    assert prefix == "data:application/json;base64"
    assert not set(encoded) & set("-_")
    method = json.loads(base64.b64decode(encoded, validate=True))
    assert method["type"] == "EcdsaSecp256k1VerificationKey2019"
    assert {**method["publicKeyJwk"], "key_ops": None} == {**issuing_jwk(did), "key_ops": None}
    header, empty, signature = proof["jws"].split(".")
    assert empty == ""
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {
        "b64": False,
        "crit": ["b64"],
        "alg": "ES256K",
    }
    unsigned = {name: value for name, value in document.items() if name != "proof"}
    raw = base64.urlsafe_b64decode(signature + "==")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    signing_input = header.encode() + b"." + nquads(unsigned).encode()
    issuing_public_key(did).verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        issuing_public_key(did).verify(der, signing_input + b" ", ec.ECDSA(hashes.SHA256()))
    return gzip.decompress(base64.urlsafe_b64decode(document["credentialSubject"]["encodedList"]))


def bit(bits: bytes, index: int) -> int:
    return (bits[index // 8] >> (7 - index % 8)) & 1


def test_the_list_verifies_and_its_bit_is_set_once_revoked(serve):
    served = serve()
    app = served.app
    org = make_org(app)
    client = app.test_client()
    credential = issue(client, org)
    with app.app_context():
        row = credential_row(app, credential["id"])
        did = prism_issuer.prism_issuer_of(row.organization_id).did
        db.session.commit()
        entry = prism_issuer.status_entry(row)
        index = row.status_index
    uri = entry["statusListCredential"]
    assert uri.startswith(served.base + "/issuers/")

    answer = client.get(local(uri))
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "public, max-age=60"
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    document = answer.get_json()
    # The draft's own context, which the Identus SDK carries: its check fetches no context.
    assert document["@context"] == [
        "https://www.w3.org/2018/credentials/v1",
        "https://w3id.org/vc/status-list/2021/v1",
    ]
    assert document["type"] == ["VerifiableCredential", "StatusList2021Credential"]
    assert document["id"] == uri and document["issuer"] == did
    subject = document["credentialSubject"]
    assert subject["type"] == "StatusList2021" and subject["statusPurpose"] == "Revocation"
    bits = verify_independently(document, did)
    assert len(bits) * 8 == 131_072 and bit(bits, index) == 0

    def checked() -> int:
        # Fetched over HTTP from the running service, as any verifier would (no shortcut).
        fetcher = Fetcher(allow_private=True, timeout=5.0, cache=TTLCache())
        result = check_bitstring_status(
            entry, credential_issuer=resolved(did), fetcher=fetcher, anchors=[], now=now()
        )
        return result.status

    assert checked() == VALID
    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.status_code == 200, revoked.get_json()
    assert bit(verify_independently(client.get(local(uri)).get_json(), did), index) == 1
    assert checked() == INVALID


def test_a_list_in_the_form_served_before_still_verifies_here(app):
    # Lists served before named the key by its DID URL and the agent's w3c.github.io context;
    # a verifier may hold one in its cache for a minute. This service's verifier still reads
    # that form (signed by the issuer's own key); the SDK never did.
    org = make_org(app)
    credential = issue(app.test_client(), org)
    with app.app_context():
        row = credential_row(app, credential["id"])
        issuer = prism_issuer.prism_issuer_of(row.organization_id)
        db.session.commit()
        uri = prism_issuer.status_entry(row)["statusListCredential"]
        served = prism_issuer.status_list_document(
            row.organization_id, row.status_list, IssuerLinks(app.config["PUBLIC_URL"])
        )
        old = {name: value for name, value in served.items() if name != "proof"}
        old["@context"] = [
            "https://www.w3.org/2018/credentials/v1",
            "https://w3c.github.io/vc-bitstring-status-list/contexts/2021/v1.jsonld",
        ]
        key = prism_issuer.signing_key(issuer)
        did = issuer.did
    created = served["proof"]["created"]
    for document in (served, sign_secp256k1_2019(old, key, f"{did}#issuing-0", created)):
        verified = read_list(document, uri, resolved(did), now())
        assert verified.purpose == "revocation"
    # The key in the data: URI must still be the credential issuer's.
    stranger = ec.generate_private_key(ec.SECP256K1())
    while not prism.sdk_accepts(stranger.public_key()):
        stranger = ec.generate_private_key(ec.SECP256K1())
    jwk = prism.PublicKey("k", prism.ISSUING, prism.SECP256K1, *coordinates(stranger)).jwk()
    forged = sign_secp256k1_2019(old, stranger, secp256k1_key_uri(jwk), created)
    with pytest.raises(StatusError, match="not the credential issuer's"):
        read_list(forged, uri, resolved(did), now())


def coordinates(key: ec.EllipticCurvePrivateKey) -> tuple[bytes, bytes]:
    numbers = key.public_key().public_numbers()
    return numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")


def test_a_list_before_the_did_or_never_started_is_not_found(app):
    org = make_org(app)
    client = app.test_client()
    assert client.get(f"/issuers/{org.id}/credential-status/0").status_code == 404
    with app.app_context():
        prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        db.session.commit()
    assert client.get(f"/issuers/{org.id}/credential-status/0").status_code == 200
    assert client.get(f"/issuers/{org.id}/credential-status/7").status_code == 404
    assert client.get(f"/issuers/{uuid.uuid4()}/credential-status/0").status_code == 404


# ------------------------------------------------------------- this service's own verifier


class NoFetch(Fetcher):
    def get_bytes(self, *args, **kwargs):  # type: ignore[override]
        raise AssertionError("the own list shortcut fetched")


def test_the_own_verifier_reads_the_list_from_the_database_at_once(app):
    org = make_org(app)
    client = app.test_client()
    credential = issue(client, org)
    base = app.config["PUBLIC_URL"]
    fetcher = NoFetch(allow_private=False, timeout=1.0, cache=TTLCache())

    def checked() -> int:
        with app.app_context():
            row = credential_row(app, credential["id"])
            did = prism_issuer.prism_issuer_of(row.organization_id).did
            db.session.commit()
            return check_bitstring_status(
                prism_issuer.status_entry(row),
                credential_issuer=resolved(did),
                fetcher=fetcher,
                anchors=[],
                now=now(),
                own=own_issuers(base),
            ).status

    assert checked() == VALID
    assert client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert checked() == INVALID


def test_a_credential_of_one_organization_naming_anothers_list_is_refused(app):
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Other")
    credential = issue(app.test_client(), org)
    base = app.config["PUBLIC_URL"]
    with app.app_context():
        row = credential_row(app, credential["id"])
        did = prism_issuer.prism_issuer_of(row.organization_id).did
        prism_issuer.prism_issuer_of(uuid.UUID(other.id))
        db.session.commit()
        entry = prism_issuer.status_entry(row)
        entry["statusListCredential"] = entry["statusListCredential"].replace(org.id, other.id)
        fetcher = NoFetch(allow_private=False, timeout=1.0, cache=TTLCache())
        with pytest.raises(StatusError, match="not a list of the credential's issuer"):
            check_bitstring_status(
                entry,
                credential_issuer=resolved(did),
                fetcher=fetcher,
                anchors=[],
                now=now(),
                own=own_issuers(base),
            )
        # Another did:prism naming this organization's list is refused alike.
        stranger = prism.make().did
        entry = prism_issuer.status_entry(row)
        with pytest.raises(StatusError, match="not a list of the credential's issuer"):
            check_bitstring_status(
                entry,
                credential_issuer=resolved(stranger),
                fetcher=fetcher,
                anchors=[],
                now=now(),
                own=own_issuers(base),
            )


# ---------------------------------------------------------------------------------- shown


def test_the_issuer_metadata_names_the_did_once_it_is_made(app):
    org = make_org(app)
    client = app.test_client()
    path = f"/.well-known/openid-credential-issuer/issuers/{org.id}"
    assert "verity_did_prism" not in client.get(path).get_json()  # reading makes none
    with app.app_context():
        issuer = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        db.session.commit()
        did, short = issuer.did, issuer.short_form
    shown = client.get(path).get_json()["verity_did_prism"]
    assert shown == {"did": did, "short_form": short, "did_document": prism.resolve(did)}


def test_the_dashboard_shows_the_did_and_its_document(app):
    from staff.staff_support import sign_in

    org = make_org(app)
    browser = app.test_client()
    assert sign_in(browser, org.staff.token).status_code == 302
    page = browser.get(f"/dashboard/organizations/{org.id}").get_data(as_text=True)
    assert 'data-testid="did-prism-none"' in page
    with app.app_context():
        issuer = prism_issuer.prism_issuer_of(uuid.UUID(org.id))
        db.session.commit()
        did, short = issuer.did, issuer.short_form
    page = browser.get(f"/dashboard/organizations/{org.id}").get_data(as_text=True)
    assert f'<code class="uri" data-testid="did-prism">{did}</code>' in page
    assert f'<code data-testid="did-prism-short">{short}</code>' in page
    assert "<summary>DID document</summary>" in page and f"{did}#issuing-0" in page
