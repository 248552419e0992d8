"""ETSI TS 119 602 Lists of Trusted Entities, signed here with joserfc (an independent JOSE
library) as JAdES: a JWS with the signer's certificate in x5c, compact or JSON serialized.

No signed list from a real operator was public to test against; the lists below follow the
Annex A JSON binding (the ETSI JSON schema of TS 119 602 V1.1.1)."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from joserfc import jws
from joserfc.jwk import ECKey, RSAKey
from joserfc.registry import HeaderParameter, is_int, is_str
from lists_support import T0, make_signer

from app.trust.lists import TrustListError, granted, read_lote

PID_ISSUANCE = "http://uri.etsi.org/19602/SvcType/PID/Issuance"
# joserfc checks that every "crit" name is a header it knows; JAdES's signing time is one.
JADES = jws.JWSRegistry(header_registry={"sigT": HeaderParameter("Claimed signing time", is_str)})


def _b64(cert) -> str:
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def _joserfc_key(signer):
    pem = signer.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return (ECKey if hasattr(signer.key, "curve") else RSAKey).import_key(pem)


@pytest.fixture(scope="module")
def operator():
    return make_signer("Test LoTE signer", ec_key=True)


@pytest.fixture(scope="module")
def providers():
    return [make_signer(f"PID provider {n}", ec_key=True).certificate for n in range(3)]


def _lote(providers, *, next_update=T0 + timedelta(days=180), wrapped: bool = True) -> dict:
    def entity(name, cert, **service):
        return {
            "TrustedEntityInformation": {
                "TEName": [
                    {"lang": "de-DE", "value": f"{name} GmbH"},
                    {"lang": "en", "value": name},
                ],
                "TEAddress": {
                    "TEPostalAddress": [{"lang": "en", "StreetAddress": "1 Road", "Country": "ZZ"}],
                    "TEElectronicAddress": [{"lang": "en", "uriValue": "mailto:a@example.org"}],
                },
                "TEInformationURI": [{"lang": "en", "uriValue": "https://example.org"}],
            },
            "TrustedEntityServices": [
                {
                    "ServiceInformation": {
                        "ServiceName": [{"lang": "en", "value": f"{name} PID"}],
                        "ServiceTypeIdentifier": PID_ISSUANCE,
                        "ServiceDigitalIdentity": {"X509Certificates": [{"val": _b64(cert)}]},
                        **service,
                    }
                }
            ],
        }

    body = {
        "ListAndSchemeInformation": {
            "LoTEVersionIdentifier": 1,
            "LoTESequenceNumber": 3,
            "LoTEType": "http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList",
            "SchemeOperatorName": [{"lang": "en", "value": "Test Scheme Operator"}],
            "SchemeTerritory": "ZZ",
            "ListIssueDateTime": "2026-01-01T00:00:00Z",
            "NextUpdate": next_update.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "TrustedEntitiesList": [
            entity("Alpha", providers[0]),
            entity(
                "Beta",
                providers[1],
                ServiceStatus="http://uri.etsi.org/19602/SvcStatus/withdrawn",
                StatusStartingTime="2025-12-01T00:00:00Z",
            ),
            entity(
                "Gamma", providers[2], ServiceStatus="http://uri.etsi.org/19602/SvcStatus/granted"
            ),
        ],
    }
    return {"LoTE": body} if wrapped else body


def _compact(payload: dict, signer, **header) -> bytes:
    protected = {"alg": "ES256", "x5c": [_b64(signer.certificate)], **header}
    token = jws.serialize_compact(
        protected, json.dumps(payload).encode(), _joserfc_key(signer), registry=JADES
    )
    return token.encode()


def test_a_compact_jades_list_reads_back_with_its_entities(operator, providers) -> None:
    trust_list = read_lote(_compact(_lote(providers), operator), [operator.certificate])
    assert trust_list.kind == "etsi_lote"
    assert (trust_list.territory, trust_list.sequence_number) == ("ZZ", 3)
    assert trust_list.operator == "Test Scheme Operator"
    assert trust_list.issued_at == T0
    assert [(s.entity_name, s.certificate) for s in trust_list.services] == [
        ("Alpha", providers[0]),
        ("Beta", providers[1]),
        ("Gamma", providers[2]),
    ]
    assert {s.service_type for s in trust_list.services} == {PID_ISSUANCE}


def test_being_listed_without_a_status_is_granted_and_withdrawn_is_not(operator, providers) -> None:
    trust_list = read_lote(_compact(_lote(providers), operator), [operator.certificate])
    assert trust_list.services[0].status == "granted"
    kept = granted(trust_list, {PID_ISSUANCE}, T0)
    assert [s.entity_name for s in kept] == ["Alpha", "Gamma"]


def test_a_json_serialized_list_with_a_critical_signing_time_reads_back(
    operator, providers
) -> None:
    protected = {
        "alg": "ES256",
        "x5c": [_b64(operator.certificate)],
        "sigT": "2026-01-01T00:00:00Z",
        "crit": ["sigT"],
    }
    document = jws.serialize_json(
        {"protected": protected},
        json.dumps(_lote(providers, wrapped=False)).encode(),
        _joserfc_key(operator),
        registry=JADES,
    )
    trust_list = read_lote(json.dumps(document).encode(), [operator.certificate])
    assert len(trust_list.services) == 3


def test_a_list_past_its_next_update_is_read_and_says_so(operator, providers) -> None:
    stale = _compact(_lote(providers, next_update=T0 - timedelta(days=1)), operator)
    assert read_lote(stale, [operator.certificate]).next_update == T0 - timedelta(days=1)


def test_a_list_signed_by_someone_else_is_refused(operator, providers) -> None:
    stranger = make_signer("Stranger", ec_key=True)
    with pytest.raises(TrustListError, match="not signed by any of the given signer"):
        read_lote(_compact(_lote(providers), stranger), [operator.certificate])


def test_a_list_with_a_changed_payload_is_refused(operator, providers) -> None:
    header, payload, signature = _compact(_lote(providers), operator).decode().split(".")
    changed = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    changed["LoTE"]["TrustedEntitiesList"][0]["TrustedEntityInformation"]["TEName"][1]["value"] = (
        "Mallory"
    )
    forged = base64.urlsafe_b64encode(json.dumps(changed).encode()).rstrip(b"=").decode()
    with pytest.raises(TrustListError, match="signature does not verify"):
        read_lote(f"{header}.{forged}.{signature}".encode(), [operator.certificate])


def test_a_signer_certificate_claimed_by_another_key_is_refused(operator, providers) -> None:
    # The x5c names the operator, but an impostor signed: the certificate's key must verify.
    impostor = make_signer("Impostor", ec_key=True)
    protected = {"alg": "ES256", "x5c": [_b64(operator.certificate)]}
    token = jws.serialize_compact(
        protected, json.dumps(_lote(providers)).encode(), _joserfc_key(impostor)
    )
    with pytest.raises(TrustListError, match="signature does not verify"):
        read_lote(token.encode(), [operator.certificate])


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"sigD": {"mId": "http://uri.etsi.org/19182/HttpHeaders", "pars": ["x"]}}, "detached"),
        ({"x5c": None}, "names no signing certificate"),
    ],
)
def test_detached_or_certificate_less_signatures_are_refused(
    operator, providers, header, reason
) -> None:
    protected = {"alg": "ES256", "x5c": [_b64(operator.certificate)], **header}
    protected = {k: v for k, v in protected.items() if v is not None}
    header_b64 = base64.urlsafe_b64encode(json.dumps(protected).encode()).rstrip(b"=").decode()
    with pytest.raises(TrustListError, match=reason):
        read_lote(f"{header_b64}.e30.AAAA".encode(), [operator.certificate])


@pytest.mark.parametrize(
    "document", [b"", b"\xff\xfe", b"not.a.jws.at.all", b"{}", b'{"payload": "e30"}']
)
def test_unreadable_lists_are_refused_plainly(operator, document: bytes) -> None:
    with pytest.raises(TrustListError):
        read_lote(document, [operator.certificate])


def test_an_unknown_critical_header_is_refused(operator, providers) -> None:
    registry = jws.JWSRegistry(header_registry={"urn:x": HeaderParameter("Unknown", is_int)})
    protected = {"alg": "ES256", "x5c": [_b64(operator.certificate)], "urn:x": 1, "crit": ["urn:x"]}
    token = jws.serialize_compact(
        protected, json.dumps(_lote(providers)).encode(), _joserfc_key(operator), registry=registry
    )
    with pytest.raises(TrustListError, match="header extensions"):
        read_lote(token.encode(), [operator.certificate])
