"""mdoc verification against an independent issuer and wallet (@owf/mdoc): what a valid
DeviceResponse yields, and one refusal per way it can be wrong (ISO 18013-5 9.3.1,
OpenID4VP 1.0 Annex B.2)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID
from mdoc.mdoc_support import (
    CLIENT_ID,
    MDL,
    MDL_NS,
    NONCE,
    NOW,
    ORIGIN,
    RESPONSE_URI,
    Iaca,
    MdocJob,
    data_item,
    decode,
    document,
    encode,
    items,
    key_usage,
    library_transcript,
    make_iaca,
    present,
    resign_mso,
)

from app.mdoc import (
    MdocError,
    dc_api_session_transcript,
    openid4vp_session_transcript,
    verify_device_response,
)

TRANSCRIPT = openid4vp_session_transcript(CLIENT_ID, NONCE, None, RESPONSE_URI)


@pytest.fixture(scope="module")
def iaca() -> Iaca:
    return make_iaca()


@pytest.fixture(scope="module")
def entry(iaca: Iaca) -> str:
    return present(MdocJob(iaca))


def verify(entry: str, iaca: Iaca, *, transcript: bytes = TRANSCRIPT, doctype: str = MDL, now=NOW):
    return verify_device_response(
        entry, doctype=doctype, transcript=transcript, anchors=[iaca.root], now=now
    )


# --------------------------------------------------------------------------- transcripts

THUMBPRINT = hashlib.sha256(b"the verifier's response encryption JWK").digest()


@pytest.mark.parametrize("thumbprint", [None, THUMBPRINT], ids=["plain", "encrypted"])
def test_our_openid4vp_transcript_is_the_bytes_the_library_builds(iaca, thumbprint):
    job = MdocJob(iaca, jwk_thumbprint=thumbprint)

    ours = openid4vp_session_transcript(CLIENT_ID, NONCE, thumbprint, RESPONSE_URI)
    assert ours == library_transcript(job)


@pytest.mark.parametrize("thumbprint", [None, THUMBPRINT], ids=["plain", "encrypted"])
def test_our_dc_api_transcript_is_the_bytes_the_library_builds(iaca, thumbprint):
    job = MdocJob(iaca, origin=ORIGIN, jwk_thumbprint=thumbprint)

    assert dc_api_session_transcript(ORIGIN, NONCE, thumbprint) == library_transcript(job)


# --------------------------------------------------------------------------- accepted


def test_a_valid_device_response_yields_its_issuer_signed_elements(entry, iaca):
    verified = verify(entry, iaca)

    assert verified.doctype == MDL
    assert verified.namespaces == {
        MDL_NS: {
            "family_name": "Mustermann",
            "given_name": "Erika",
            "birth_date": "1990-04-12",
            "age_over_18": True,
            "issuing_country": "UT",
            "document_number": "UT-12345",
            "issue_date": "2024-01-02",
        }
    }
    assert verified.status is None


def test_the_issuer_is_the_document_signer_chained_to_its_anchor(entry, iaca):
    issuer = verify(entry, iaca).issuer

    assert issuer.method == "x5c"
    assert issuer.certificates == (iaca.signer, iaca.root)
    assert issuer.identifier == iaca.signer.subject.rfc4514_string()


def test_only_the_elements_the_wallet_disclosed_are_returned(iaca):
    job = MdocJob(iaca, disclose={MDL_NS: ["age_over_18"]})

    assert verify(present(job), iaca).namespaces == {MDL_NS: {"age_over_18": True}}


def test_the_encryption_key_thumbprint_is_part_of_the_handover(iaca):
    entry = present(MdocJob(iaca, jwk_thumbprint=THUMBPRINT))

    transcript = openid4vp_session_transcript(CLIENT_ID, NONCE, THUMBPRINT, RESPONSE_URI)
    assert verify(entry, iaca, transcript=transcript).doctype == MDL
    with pytest.raises(MdocError, match=r"^DeviceAuth signature does not verify$"):
        verify(entry, iaca)


def test_the_dc_api_handover_binds_the_origin(iaca):
    entry = present(MdocJob(iaca, origin=ORIGIN))

    assert verify(entry, iaca, transcript=dc_api_session_transcript(ORIGIN, NONCE, None))
    with pytest.raises(MdocError, match=r"^DeviceAuth signature does not verify$"):
        verify(entry, iaca, transcript=dc_api_session_transcript("https://evil.test", NONCE, None))


def test_the_mso_status_entry_is_returned_for_the_status_check(entry, iaca):
    status = {"status_list": {"idx": 7, "uri": "https://issuer.test/statuslists/1"}}
    signed = resign_mso(entry, iaca, lambda mso: mso.update(status=status))

    assert verify(signed, iaca).status == status


@pytest.mark.parametrize(
    ("alg", "curve", "digest"),
    [("ES384", ec.SECP384R1(), "SHA-384"), ("ES512", ec.SECP521R1(), "SHA-512")],
)
def test_issuers_may_sign_with_es384_and_es512_and_digest_with_sha384_and_sha512(
    alg, curve, digest
):
    iaca = make_iaca(signer_curve=curve)
    entry = present(MdocJob(iaca, alg=alg, digest_algorithm=digest))

    assert verify(entry, iaca).namespaces[MDL_NS]["family_name"] == "Mustermann"


def test_an_issuer_may_name_es256_by_its_fully_specified_identifier_esp256(entry, iaca):
    """HAIP 1.0 names ES256 as COSE -7 or -9 (ESP256, RFC 9864): the same signature."""
    renamed = resign_mso(entry, iaca, alg=-9)

    assert verify(renamed, iaca).namespaces[MDL_NS]["family_name"] == "Mustermann"


def test_the_certificate_chain_may_be_in_the_protected_header(entry, iaca):
    moved = resign_mso(entry, iaca, x5chain_protected=True)

    assert verify(moved, iaca).issuer.certificates == (iaca.signer, iaca.root)


def test_the_issuer_s_cose_sign1_may_carry_its_tag(entry, iaca):
    # What a tag holds decodes as a tuple, its unprotected header (the x5chain) a frozendict.
    response = decode(entry)
    issuer_signed = document(response)["issuerSigned"]
    issuer_signed["issuerAuth"] = cbor2.CBORTag(18, issuer_signed["issuerAuth"])

    assert verify(encode(response), iaca).issuer.certificates == (iaca.signer, iaca.root)


def test_an_element_value_under_a_tag_of_no_known_meaning_is_given_as_its_content(entry, iaca):
    response = decode(entry)
    item = cbor2.loads(items(response)[0].value)
    item["elementValue"] = cbor2.CBORTag(65000, {"kind": ["a", b"\x01"], 7: {"b": 1}})
    items(response)[0] = data_item(item)
    digest = hashlib.sha256(cbor2.dumps(items(response)[0])).digest()
    digests = {item["digestID"]: digest}
    signed = resign_mso(
        encode(response), iaca, lambda mso: mso["valueDigests"][MDL_NS].update(digests)
    )

    elements = verify(signed, iaca).namespaces[MDL_NS]
    assert elements[item["elementIdentifier"]] == {"kind": ["a", "AQ"], "7": {"b": 1}}


# --------------------------------------------------------------------------- refused


def edited(edit: Callable[[dict[str, Any]], Any]) -> Callable[[str, Iaca], str]:
    """An entry whose decoded DeviceResponse ``edit`` changed in place."""

    def make(entry: str, iaca: Iaca) -> str:
        response = decode(entry)
        edit(response)
        return encode(response)

    return make


def flip_issuer_signature(response):
    auth = document(response)["issuerSigned"]["issuerAuth"]
    auth[3] = bytes([auth[3][0] ^ 1]) + auth[3][1:]


def change_element_value(response):
    first = items(response)[0]
    item = cbor2.loads(first.value)
    item["elementValue"] = "Someone Else"
    items(response)[0] = data_item(item)


def repeat_digest_id(response):
    items(response).append(items(response)[0])


def repeat_element(response):
    item = cbor2.loads(items(response)[0].value)
    item["digestID"] = item["digestID"] + 1_000_000
    items(response).append(data_item(item))


def device_mac(response):
    auth = document(response)["deviceSigned"]["deviceAuth"]
    auth["deviceMac"] = auth.pop("deviceSignature")


def no_device_auth(response):
    document(response)["deviceSigned"]["deviceAuth"] = {}


def no_x5chain(response):
    document(response)["issuerSigned"]["issuerAuth"][1] = {}


def issuer_alg_edwards(response):
    auth = document(response)["issuerSigned"]["issuerAuth"]
    auth[0] = cbor2.dumps({1: -8})


def two_documents(response):
    response["documents"].append(response["documents"][0])


def issued(**changes) -> Callable[[str, Iaca], str]:
    """A fresh mdoc from the library with ``changes`` to the job (same IACA)."""
    return lambda entry, iaca: present(MdocJob(iaca, **changes))


def mso(edit: Callable[[dict[str, Any]], Any]) -> Callable[[str, Iaca], str]:
    return lambda entry, iaca: resign_mso(entry, iaca, edit)


REFUSALS: list[tuple[str, Callable[[str, Iaca], str], dict[str, Any], str]] = [
    (
        "issuer signature byte flipped",
        edited(flip_issuer_signature),
        {},
        "IssuerAuth signature does not verify",
    ),
    (
        "element value changed",
        edited(change_element_value),
        {},
        "Issuer-signed item does not match its digest in the mobile security object",
    ),
    (
        "MSO not yet valid",
        issued(valid_from=NOW + timedelta(days=1)),
        {},
        "Credential is not valid yet",
    ),
    (
        "MSO expired",
        issued(valid_from=NOW - timedelta(days=10), valid_until=NOW - timedelta(days=1)),
        {},
        "Credential has expired",
    ),
    (
        "device signature over another nonce",
        lambda e, i: e,
        {"transcript": openid4vp_session_transcript(CLIENT_ID, "another", None, RESPONSE_URI)},
        "DeviceAuth signature does not verify",
    ),
    (
        "device signature for another client_id",
        lambda e, i: e,
        {
            "transcript": openid4vp_session_transcript(
                "x509_san_dns:evil.test", NONCE, None, RESPONSE_URI
            )
        },
        "DeviceAuth signature does not verify",
    ),
    (
        "device signature for another response_uri",
        lambda e, i: e,
        {"transcript": openid4vp_session_transcript(CLIENT_ID, NONCE, None, "https://evil.test/r")},
        "DeviceAuth signature does not verify",
    ),
    (
        "device signature over a DC API handover",
        lambda e, i: e,
        {"transcript": dc_api_session_transcript(ORIGIN, NONCE, None)},
        "DeviceAuth signature does not verify",
    ),
    (
        "device key not the MSO's",
        issued(wallet_key=ec.generate_private_key(ec.SECP256R1())),
        {},
        "DeviceAuth signature does not verify",
    ),
    (
        "wrong doctype",
        lambda e, i: e,
        {"doctype": "eu.europa.ec.eudi.pid.1"},
        "Credential type presented is not the type this verification asks for",
    ),
    (
        "deviceMac",
        edited(device_mac),
        {},
        "Device authentication uses a MAC, which needs a reader key this flow does not have; "
        "a device signature is required",
    ),
    ("no DeviceAuth", edited(no_device_auth), {}, "Device authentication is missing"),
    ("digest ID twice", edited(repeat_digest_id), {}, "Issuer-signed items repeat a digest ID"),
    ("element twice", edited(repeat_element), {}, "Issuer-signed items repeat an element"),
    (
        "no x5chain",
        edited(no_x5chain),
        {},
        "IssuerAuth carries no certificate chain (x5chain)",
    ),
    (
        "issuer alg EdDSA",
        edited(issuer_alg_edwards),
        {},
        "IssuerAuth is signed with algorithm -8; only ES256 (or ESP256), ES384 and ES512 are "
        "accepted",
    ),
    ("two documents", edited(two_documents), {}, "Device response holds more than one document"),
    (
        "status not OK",
        edited(lambda r: r.update(status=10)),
        {},
        "Device response status is not OK",
    ),
    ("no documents", edited(lambda r: r.pop("documents")), {}, "Device response holds no document"),
    (
        "MSO docType differs",
        mso(lambda m: m.update(docType="eu.europa.ec.eudi.pid.1")),
        {},
        "Mobile security object docType does not match the document",
    ),
    (
        "MSO digest SHA-1",
        mso(lambda m: m.update(digestAlgorithm="SHA-1")),
        {},
        "Mobile security object digest algorithm is not SHA-256, SHA-384 or SHA-512",
    ),
    (
        "MSO signed before its signer's certificate",
        mso(lambda m: m["validityInfo"].update(signed=NOW - timedelta(days=400))),
        {},
        "Mobile security object was signed outside its document signer certificate's validity",
    ),
    (
        "MSO version 2",
        mso(lambda m: m.update(version="2.0")),
        {},
        "Mobile security object version is not 1.0",
    ),
    (
        "device key on no curve we accept",
        mso(lambda m: m["deviceKeyInfo"]["deviceKey"].update({-1: 6})),
        {},
        "Device key curve is not P-256, P-384 or P-521",
    ),
    ("not base64url", lambda e, i: e + "!", {}, "Device response is not base64url"),
    ("not CBOR", lambda e, i: "_w", {}, "Device response is not valid CBOR"),
    (
        "trailing bytes",
        lambda e, i: encode_raw(base64.urlsafe_b64decode(e + "==") + b"\x00"),
        {},
        "Device response is not valid CBOR",
    ),
    (
        "not a map",
        lambda e, i: encode_raw(cbor2.dumps([1, 2])),
        {},
        "Device response is not a CBOR map",
    ),
    ("empty", lambda e, i: "", {}, "Device response is not a base64url string"),
    ("too large", lambda e, i: "A" * 1_000_004, {}, "Device response is too large"),
    (
        "array declared with 2^32 items",
        lambda e, i: encode_raw(b"\x9b\x00\x00\x00\x01\x00\x00\x00\x00"),
        {},
        "Device response is not valid CBOR",
    ),
    (
        "nested deeper than any mdoc",
        lambda e, i: encode_raw(b"\x81" * 5000 + b"\x00"),
        {},
        "Device response is not valid CBOR",
    ),
]


def encode_raw(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(
    ("make", "options", "reason"),
    [pytest.param(make, options, reason, id=name) for name, make, options, reason in REFUSALS],
)
def test_refused(entry, iaca, make, options, reason):
    with pytest.raises(MdocError) as refused:
        verify(make(entry, iaca), iaca, **options)

    assert refused.value.reason == reason


# The certificate cases need their own IACA; the clock and the anchors are the verifier's.


def test_refused_when_the_document_signer_certificate_has_expired():
    iaca = make_iaca(signer_from=NOW - timedelta(days=60), signer_until=NOW - timedelta(days=1))
    entry = present(MdocJob(iaca))

    with pytest.raises(MdocError, match=r"^Issuer certificate has expired$"):
        verify(entry, iaca)


def test_refused_when_the_chain_leads_to_an_untrusted_root(entry):
    stranger = make_iaca()

    with pytest.raises(MdocError, match=r"^Certificate chain does not lead to a trusted anchor$"):
        verify(entry, stranger)


def test_refused_when_the_signer_may_not_sign():
    iaca = make_iaca(signer_usage=key_usage(sign=False, ca=False))
    entry = present(MdocJob(iaca))

    with pytest.raises(MdocError, match=r"^Issuer certificate does not allow digital signatures"):
        verify(entry, iaca)


def test_refused_when_the_signer_is_not_a_document_signer():
    iaca = make_iaca(signer_eku=ExtendedKeyUsageOID.SERVER_AUTH)
    entry = present(MdocJob(iaca))

    with pytest.raises(MdocError, match=r"^Issuer certificate is not a document signer"):
        verify(entry, iaca)


def test_no_single_bit_flip_changes_what_is_attested(entry, iaca):
    """Flip each byte's low bit in turn: the response is refused with a reason, or (where the
    bit is outside everything signed, such as an unknown map key) says no more than before."""
    raw = base64.urlsafe_b64decode(entry + "=" * (-len(entry) % 4))
    attested = verify(entry, iaca).namespaces[MDL_NS].items()
    for index in range(len(raw)):
        flipped = bytearray(raw)
        flipped[index] ^= 1
        try:
            verified = verify(encode_raw(bytes(flipped)), iaca)
        except MdocError:
            continue
        assert verified.namespaces.get(MDL_NS, {}).items() <= attested, index
        assert set(verified.namespaces) <= {MDL_NS}, index
