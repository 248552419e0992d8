"""An mdoc's status, read from a Token Status List in its CWT form (application/statuslist+cwt)
served by a real local server: signed by the document signer itself or by a certificate under
the same trust anchor, and refused (fail-closed) otherwise."""

from __future__ import annotations

import zlib
from typing import Any

import cbor2
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from trust.trust_support import NOW, LocalServer, make_cert

from app.statuslist import StatusError
from app.statuslist.cwt import check_cwt_status
from app.trust.fetch import Fetcher, TTLCache
from app.trust.issuers import ResolvedIssuer
from app.trust.x5c import validate_chain

TYP = "application/statuslist+cwt"


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0, cache=TTLCache())


@pytest.fixture
def pki():
    root = make_cert("IACA Root", ca=True)
    signer = make_cert("Document Signer", issuer=root)
    return {"root": root, "signer": signer}


def document_signer(pki) -> ResolvedIssuer:
    path = validate_chain([pki["signer"].cert], [pki["root"].cert], NOW)
    return ResolvedIssuer("Document Signer", pki["signer"].key.public_key(), "x5c", path)


def sign1(payload: dict, key: ec.EllipticCurvePrivateKey, *, typ: Any = TYP, chain=()) -> bytes:
    """COSE_Sign1 made the way RFC 9052 4.4 spells it out, ES256."""
    protected: dict[int, Any] = {1: -7}
    if typ is not None:
        protected[16] = typ
    protected_bytes = cbor2.dumps(protected)
    body = cbor2.dumps(payload)
    to_sign = cbor2.dumps(["Signature1", protected_bytes, b"", body])
    r, s = decode_dss_signature(key.sign(to_sign, ec.ECDSA(hashes.SHA256())))
    unprotected = {33: [c.public_bytes(serialization.Encoding.DER) for c in chain]} if chain else {}
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return cbor2.dumps(cbor2.CBORTag(18, [protected_bytes, unprotected, body, signature]))


def list_claims(uri: str, statuses: list[int], extra: dict | None = None) -> dict:
    packed = bytearray((len(statuses) + 7) // 8)
    for index, status in enumerate(statuses):
        packed[index // 8] |= status << (index % 8)
    claims = {
        2: uri,
        6: int(NOW.timestamp()),
        4: int(NOW.timestamp()) + 3600,
        65534: 300,
        65533: {"bits": 1, "lst": zlib.compress(bytes(packed))},
    }
    claims.update(extra or {})
    return claims


def publish(server: LocalServer, token: bytes, path: str = "/lists/1") -> str:
    server.add(path, token, headers={"Content-Type": TYP})
    return server.url(path)


def check(uri: str, idx: int, issuer: ResolvedIssuer, fetcher: Fetcher, pki):
    return check_cwt_status(
        {"status_list": {"idx": idx, "uri": uri}},
        credential_issuer=issuer,
        fetcher=fetcher,
        anchors=[pki["root"].cert],
        now=NOW,
    )


def test_the_entry_of_a_list_signed_by_the_document_signer_decides(server, fetcher, pki):
    uri = server.url("/lists/1")
    publish(server, sign1(list_claims(uri, [0, 1]), pki["signer"].key))
    issuer = document_signer(pki)
    assert check(uri, 0, issuer, fetcher, pki).valid
    revoked = check(uri, 1, issuer, fetcher, pki)
    assert (revoked.revoked, revoked.reason) == (True, "Credential has been revoked by its issuer")


def test_a_list_signed_under_the_same_trust_anchor_is_accepted(server, fetcher, pki):
    status_signer = make_cert("Status List Signer", issuer=pki["root"])
    uri = server.url("/lists/1")
    token = sign1(list_claims(uri, [1]), status_signer.key, chain=[status_signer.cert])
    publish(server, token)
    assert check(uri, 0, document_signer(pki), fetcher, pki).revoked


def test_a_list_signed_under_an_untrusted_anchor_is_refused(server, fetcher, pki):
    other_root = make_cert("Other IACA", ca=True)
    other = make_cert("Other Signer", issuer=other_root)
    uri = server.url("/lists/1")
    publish(server, sign1(list_claims(uri, [0]), other.key, chain=[other.cert]))
    with pytest.raises(StatusError, match="could not be established"):
        check(uri, 0, document_signer(pki), fetcher, pki)


def test_a_list_chaining_to_another_trusted_anchor_is_still_another_issuer(server, fetcher, pki):
    other_root = make_cert("Other IACA", ca=True)
    other = make_cert("Other Signer", issuer=other_root)
    uri = server.url("/lists/1")
    publish(server, sign1(list_claims(uri, [0]), other.key, chain=[other.cert]))
    with pytest.raises(StatusError, match="signed by another issuer"):
        check_cwt_status(
            {"status_list": {"idx": 0, "uri": uri}},
            credential_issuer=document_signer(pki),
            fetcher=fetcher,
            anchors=[pki["root"].cert, other_root.cert],
            now=NOW,
        )


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda uri, pki: sign1(list_claims(uri, [0]), make_cert("X").key), "does not verify"),
        (lambda uri, pki: sign1(list_claims(uri, [0]), pki["signer"].key, typ=None), "typ"),
        (
            lambda uri, pki: sign1(list_claims(uri, [0]), pki["signer"].key, typ="statuslist+jwt"),
            "typ",
        ),
        (lambda uri, pki: sign1(list_claims("https://x", [0]), pki["signer"].key), "another list"),
        (
            lambda uri, pki: sign1(list_claims(uri, [0], {4: 1}), pki["signer"].key),
            "has expired",
        ),
        (lambda uri, pki: sign1({2: uri, 6: 1, 65533: "x"}, pki["signer"].key), "status_list"),
        (lambda uri, pki: b"\xff\x00not cbor", "not valid CBOR"),
        (lambda uri, pki: cbor2.dumps([1, 2, 3]), "COSE_Sign1"),
    ],
    ids=[
        "signed by another key",
        "no typ",
        "jwt typ",
        "sub of another list",
        "expired",
        "no status list",
        "not cbor",
        "not a sign1",
    ],
)
def test_a_list_that_proves_nothing_fails_closed(server, fetcher, pki, make, reason):
    uri = server.url("/lists/1")
    publish(server, make(uri, pki))
    with pytest.raises(StatusError, match=reason):
        check(uri, 0, document_signer(pki), fetcher, pki)


def test_a_list_that_cannot_be_fetched_fails_closed(server, fetcher, pki):
    with pytest.raises(StatusError, match="could not be fetched"):
        check(server.url("/lists/gone"), 0, document_signer(pki), fetcher, pki)


def test_a_verified_list_is_kept_for_its_ttl(server, fetcher, pki):
    uri = server.url("/lists/1")
    publish(server, sign1(list_claims(uri, [0]), pki["signer"].key))
    issuer = document_signer(pki)
    assert check(uri, 0, issuer, fetcher, pki).valid
    publish(server, sign1(list_claims(uri, [1]), pki["signer"].key))
    assert check(uri, 0, issuer, fetcher, pki).valid, "read again within its ttl"
