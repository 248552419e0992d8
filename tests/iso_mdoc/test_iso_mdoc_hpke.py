"""The HPKE suite ``org-iso-mdoc`` responses are opened with, against RFC 9180's own test
vector for it (Appendix A.3.1: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, base
mode), so the library is checked by the specification and not only by another library."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from pyhpke import KEMKey
from pyhpke.exceptions import OpenError

from app.mdoc.annex_c import SUITE

INFO = bytes.fromhex("4f6465206f6e2061204772656369616e2055726e")
SK_RM = "f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2"
ENC = bytes.fromhex(
    "04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325"
    "ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4"
)
PT = bytes.fromhex("4265617574792069732074727574682c20747275746820626561757479")
# (aad, ct) of sequence numbers 0, 1 and 2: one context opens them in order.
ENCRYPTIONS = [
    (
        "436f756e742d30",
        "5ad590bb8baa577f8619db35a36311226a896e7342a6d836d8b7bcd2f20b6c7f9076ac232e3ab2523f39513434",
    ),
    (
        "436f756e742d31",
        "fa6f037b47fc21826b610172ca9637e82d6e5801eb31cbd3748271affd4ecb06646e0329cbdf3c3cd655b28e82",
    ),
    (
        "436f756e742d32",
        "895cabfac50ce6c6eb02ffe6c048bf53b7f7be9a91fc559402cbc5b8dcaeb52b2ccc93e466c28fb55fed7a7fec",
    ),
]


def recipient() -> KEMKey:
    key = ec.derive_private_key(int(SK_RM, 16), ec.SECP256R1())
    return KEMKey.from_pyca_cryptography_key(key)


def test_the_suite_opens_rfc_9180_a_3_1():
    context = SUITE.create_recipient_context(ENC, recipient(), info=INFO)
    for aad, ct in ENCRYPTIONS:
        assert context.open(bytes.fromhex(ct), aad=bytes.fromhex(aad)) == PT


def test_another_info_does_not_open():
    context = SUITE.create_recipient_context(ENC, recipient(), info=INFO + b"!")
    with pytest.raises(OpenError):
        context.open(bytes.fromhex(ENCRYPTIONS[0][1]), aad=bytes.fromhex(ENCRYPTIONS[0][0]))
