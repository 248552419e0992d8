"""Wallet-side helpers for zero-knowledge tests: credentials under a test IACA, proofs made by
the ``isrg-rust`` backend (the implementation Verity does not verify with), and the answer
(a DeviceResponse with ``zkDocuments``) in the form Google Wallet sends."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pylongfellow import Pylongfellow, mdoc
from pylongfellow.mdoc import testing

from app.zk.backend import circuit_bytes
from app.zk.circuits import PINNED

FIXTURES = Path(__file__).parent / "fixtures"
ORIGIN = "https://verity.test"
DOCTYPE = "org.iso.18013.5.1.mDL"
NAMESPACE = "org.iso.18013.5.1"
V7, V6 = PINNED
# One unpinned row of Google's table (version 5, one attribute).
UNPINNED_V5 = "f88a39e561ec0be02bb3dfe38fb609ad154e98decbbe632887d850fc612fea6f"


@dataclass(frozen=True)
class Authority:
    """A test IACA and a document signer it certified."""

    iaca: x509.Certificate
    iaca_key: ec.EllipticCurvePrivateKey
    ds: x509.Certificate
    ds_key: ec.EllipticCurvePrivateKey

    def signer(self, now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        """Another document signer of the same IACA (another issuer key)."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = testing.create_certificate(
            "Other Test DS", key.public_key(), "Test IACA", self.iaca_key, *_window(now)
        )
        return cert, key


def _window(now: datetime) -> tuple[datetime, datetime]:
    return now - timedelta(days=30), now + timedelta(days=365)


def authority(now: datetime, name: str = "Test IACA") -> Authority:
    iaca_key = ec.generate_private_key(ec.SECP256R1())
    iaca = testing.create_certificate(
        name,
        iaca_key.public_key(),
        name,
        iaca_key,
        now - timedelta(days=60),
        now + timedelta(days=3650),
        ca=True,
    )
    ds_key = ec.generate_private_key(ec.SECP256R1())
    ds = testing.create_certificate(
        f"{name} DS", ds_key.public_key(), name, iaca_key, *_window(now)
    )
    return Authority(iaca, iaca_key, ds, ds_key)


def end_of_day(now: datetime) -> datetime:
    """What Google Wallet proves at: the end of the current UTC day."""
    return now.astimezone(UTC).replace(hour=23, minute=59, second=59, microsecond=0)


def licence(
    signer: Authority, transcript: bytes, now: datetime, *, over_18: bool = True
) -> testing.PresentationSpecimen:
    """An mDL whose device key signed ``transcript``, issued by ``signer``'s DS."""
    return testing.create_presentation(
        DOCTYPE,
        {
            NAMESPACE: {
                "family_name": "Mustermann",
                "given_name": "Erika",
                "birth_date": cbor2.CBORTag(1004, "1971-09-01"),
                "age_over_18": over_18,
                "age_over_21": over_18,
            }
        },
        transcript,
        now - timedelta(days=1),
        now + timedelta(days=30),
        issuer_key=signer.ds_key,
        issuer_certificate=signer.ds,
    )


def prove(
    specimen: testing.PresentationSpecimen,
    transcript: bytes,
    timestamp: datetime,
    *,
    value: bool = True,
    circuit: Any = V6,
) -> bytes:
    """An isrg-rust proof that ``age_over_18`` is ``value`` (seconds of CPU: share them)."""
    prover = Pylongfellow(backend="isrg-rust")
    prover.load_circuit(circuit_bytes(circuit), circuit.version, circuit.num_attributes)
    claims = [mdoc.RequestedAttribute(NAMESPACE, "age_over_18", cbor2.dumps(value))]
    return prover.prove(specimen.mdoc, specimen.issuer_public_key, transcript, claims, timestamp)


def zk_response(
    proof: bytes,
    *,
    chain: x509.Certificate | bytes | list[bytes],
    timestamp: Any,
    system_id: str = V6.circuit_hash,
    doctype: str = DOCTYPE,
    items: dict[str, list[tuple[str, Any]]] | None = None,
    extra: dict[str, Any] | None = None,
) -> bytes:
    """The DeviceResponse Google Wallet sends (its reference verifier's ``cbor.go`` form)."""
    if isinstance(chain, x509.Certificate):
        chain = chain.public_bytes(serialization.Encoding.DER)
    spaces = items if items is not None else {NAMESPACE: [("age_over_18", True)]}
    data = {
        "docType": doctype,
        "zkSystemId": system_id,
        "timestamp": timestamp,
        "issuerSigned": {
            ns: [{"elementIdentifier": name, "elementValue": value} for name, value in pairs]
            for ns, pairs in spaces.items()
        },
        "msoX5chain": chain,
        **(extra or {}),
    }
    document = {"proof": proof, "documentData": cbor2.CBORTag(24, cbor2.dumps(data))}
    return cbor2.dumps({"version": "1.0", "status": 0, "zkDocuments": [document]})


@dataclass(frozen=True)
class Sample:
    transcript: bytes
    response: bytes


def google_sample(name: str) -> Sample:
    """A real Google Wallet answer from Google's reference verifier (``fixtures/README.md``)."""
    data = json.loads((FIXTURES / f"google-wallet-{name}.json").read_text())
    return Sample(
        base64.b64decode(data["Transcript"]), base64.b64decode(data["ZKDeviceResponseCBOR"])
    )
