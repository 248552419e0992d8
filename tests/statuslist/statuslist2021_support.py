"""StatusList2021 lists in the exact shape the Hyperledger Identus cloud agent publishes them,
made independently of the code under test: the bitstring packed here, canonicalized by PyLD
directly, signed by ``cryptography``.

The shape follows the agent's source: ``VCStatusList2021.build`` (members, contexts,
``statusPurpose`` "Revocation", ``issuanceDate`` in seconds), ``BitString.encoded`` (GZIP,
java.util.Base64 URL encoder: base64url with padding) and ``EcdsaSecp256k1Signature2019Proof
Generator.generateProof`` / ``EddsaJcs2022ProofGenerator.generateProof`` (Proof.scala): the
detached ``b64: false`` JWS over ``BASE64URL(header) "." N-Quads``, or Ed25519 over the JCS
bytes; the key as a ``data:application/json;base64,`` URI.

Two real lists the agent produced are kept too (``SDK_LIST``, ``DOCS_LIST``): one from the
Identus sdk-ts tests (tests/plugins/dif/IsCredentialRevoked.test.ts, bits 1 and 2 set), one from
the agent's docs/docusaurus/credentials/revocation.md, signed by the same key.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from pyld import jsonld

CONTEXTS = Path(__file__).resolve().parents[2] / "app" / "statuslist" / "contexts"
CONTEXT_FILES = {
    "https://www.w3.org/2018/credentials/v1": "credentials-v1.jsonld",
    "https://w3id.org/vc/status-list/2021/v1": "status-list-2021-v1.jsonld",
    "https://w3c.github.io/vc-bitstring-status-list/contexts/2021/v1.jsonld": (
        "vc-bitstring-status-list-2021-v1.jsonld"
    ),
}
IDENTUS_CONTEXT = "https://w3c.github.io/vc-bitstring-status-list/contexts/2021/v1.jsonld"
JWS_HEADER = {"b64": False, "crit": ["b64"], "alg": "ES256K"}
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _loader(url: str, options: Any = None) -> dict[str, Any]:
    document = json.loads((CONTEXTS / CONTEXT_FILES[url]).read_text())
    return {"contextUrl": None, "documentUrl": url, "document": document}


def nquads(document: dict[str, Any]) -> str:
    options = {"algorithm": "URDNA2015", "format": "application/n-quads"}
    return jsonld.normalize(document, {**options, "documentLoader": _loader})


def java_b64url(data: bytes) -> str:
    """java.util.Base64.getUrlEncoder(): base64url, padded."""
    return base64.urlsafe_b64encode(data).decode()


def b58(data: bytes) -> str:
    number, out = int.from_bytes(data, "big"), ""
    while number:
        number, rem = divmod(number, 58)
        out = BASE58[rem] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def encoded_list(set_bits: Iterable[int], length: int = 131_072) -> str:
    bits = bytearray(length // 8)
    for index in set_bits:
        bits[index // 8] |= 0x80 >> (index % 8)
    return java_b64url(gzip.compress(bytes(bits)))


def data_uri(method: dict[str, Any]) -> str:
    return "data:application/json;base64," + java_b64url(json.dumps(method).encode())


def secp256k1_method(key: ec.EllipticCurvePublicKey) -> dict[str, Any]:
    numbers = key.public_numbers()

    def coordinate(value: int) -> str:
        # BigInteger.toByteArray without the sign byte (stripLeadingZero): minimal length.
        return java_b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    return {
        "@context": ["https://w3id.org/security/v1"],
        "type": "EcdsaSecp256k1VerificationKey2019",
        "publicKeyJwk": {
            "crv": "secp256k1",
            "key_ops": ["verify"],
            "kty": "EC",
            "x": coordinate(numbers.x),
            "y": coordinate(numbers.y),
        },
    }


def multikey_method(key: ed25519.Ed25519PublicKey) -> dict[str, Any]:
    raw = key.public_bytes_raw()
    return {
        "@context": ["https://w3id.org/security/multikey/v1"],
        "type": "Multikey",
        "publicKeyMultibase": "z" + b58(b"\xed\x01" + raw),
    }


def unsigned_list(
    url: str,
    issuer: str,
    *,
    purpose: str = "Revocation",
    revoked: Iterable[int] = (),
    length: int = 131_072,
    context: str = IDENTUS_CONTEXT,
) -> dict[str, Any]:
    return {
        "@context": ["https://www.w3.org/2018/credentials/v1", context],
        "type": ["VerifiableCredential", "StatusList2021Credential"],
        "id": url,
        "issuer": issuer,
        "issuanceDate": int(time.time()),
        "credentialSubject": {
            "type": "StatusList2021",
            "statusPurpose": purpose,
            "encodedList": encoded_list(revoked, length),
        },
    }


def sign_secp256k1(
    document: dict[str, Any],
    key: ec.EllipticCurvePrivateKey,
    *,
    method: str | None = None,
    header: dict[str, Any] | None = None,
) -> dict[str, Any]:
    protected = json.dumps(header or JWS_HEADER, separators=(",", ":")).encode()
    protected = base64.urlsafe_b64encode(protected)
    protected = protected.rstrip(b"=")
    signing_input = protected + b"." + nquads(document).encode()
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    signature = base64.urlsafe_b64encode(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    proof = {
        "type": "EcdsaSecp256k1Signature2019",
        "proofPurpose": "assertionMethod",
        "verificationMethod": method or data_uri(secp256k1_method(key.public_key())),
        "created": "2026-01-02T03:04:05.123456Z",
        "jws": f"{protected.decode()}..{signature.rstrip(b'=').decode()}",
    }
    return {"proof": proof, **document}


def jcs(value: Any) -> bytes:
    # Enough of RFC 8785 for these lists: ASCII member names, strings and integers.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign_ed25519(document: dict[str, Any], key: ed25519.Ed25519PrivateKey) -> dict[str, Any]:
    proof = {
        "type": "DataIntegrityProof",
        "proofPurpose": "assertionMethod",
        "verificationMethod": data_uri(multikey_method(key.public_key())),
        "created": "2026-01-02T03:04:05.123456Z",
        "proofValue": "z" + b58(key.sign(jcs(document))),
        "cryptoSuite": "eddsa-jcs-2022",
    }
    return {"proof": proof, **document}


def entry(url: str, index: int | str, purpose: str = "Revocation") -> dict[str, Any]:
    """A credentialStatus entry as the agent writes it (CredentialServiceImpl.scala)."""
    return {
        "id": f"{url}#{index}",
        "type": "StatusList2021Entry",
        "statusPurpose": purpose,
        "statusListIndex": index,
        "statusListCredential": url,
    }


def flip_bit(document: dict[str, Any], index: int) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    subject = changed["credentialSubject"]
    bits = bytearray(gzip.decompress(base64.urlsafe_b64decode(subject["encodedList"])))
    bits[index // 8] ^= 0x80 >> (index % 8)
    subject["encodedList"] = java_b64url(gzip.compress(bytes(bits)))
    return changed


@dataclass(frozen=True)
class RealList:
    document: dict[str, Any]

    @property
    def key_method(self) -> str:
        return self.document["proof"]["verificationMethod"]


_AGENT_KEY = (
    "data:application/json;base64,eyJAY29udGV4dCI6WyJodHRwczovL3czaWQub3JnL3NlY3VyaXR5L3YxIl0sInR5"
    "cGUiOiJFY2RzYVNlY3AyNTZrMVZlcmlmaWNhdGlvbktleTIwMTkiLCJwdWJsaWNLZXlKd2siOnsiY3J2Ijoic2VjcDI1"
    "NmsxIiwia2V5X29wcyI6WyJ2ZXJpZnkiXSwia3R5IjoiRUMiLCJ4IjoiQ1hJRmwyUjE4YW1lTEQteWtTT0dLUW9DQlZi"
    "Rk01b3Vsa2MydklySnRTND0iLCJ5IjoiRDJRWU5pNi1BOXoxbHhwUmpLYm9jS1NUdk5BSXNOVnNsQmpsemVnWXlVQT0i"
    "fX0="
)
AGENT_ISSUER = "did:prism:462c4811bf61d7de25b3baf86c5d2f0609b4debe53792d297bf612269bf8593a"

SDK_LIST = RealList(
    {
        "proof": {
            "type": "EcdsaSecp256k1Signature2019",
            "proofPurpose": "assertionMethod",
            "verificationMethod": _AGENT_KEY,
            "created": "2024-07-25T22:49:59.091957Z",
            "jws": "eyJiNjQiOmZhbHNlLCJjcml0IjpbImI2NCJdLCJhbGciOiJFUzI1NksifQ..FJLUBsZhGB1o_G1U"
            "wsVaoL-8agvcpoelJtAr2GlNOOqCSOd-WNEj5-FOgv0m0QcdKMokl2TxibJMg3Y-MJq4-A",
        },
        "@context": [
            "https://www.w3.org/2018/credentials/v1",
            "https://w3id.org/vc/status-list/2021/v1",
        ],
        "type": ["VerifiableCredential", "StatusList2021Credential"],
        "id": "http://localhost:8085/credential-status/01def9a2-2bcb-4bb3-8a36-6834066431d0",
        "issuer": AGENT_ISSUER,
        "issuanceDate": 1721947798,
        "credentialSubject": {
            "type": "StatusList2021",
            "statusPurpose": "Revocation",
            "encodedList": "H4sIAAAAAAAA_-3BIQEAAAACIKf6f4UzLEADAAAAAAAAAAAAAAAAAAAAvA3PduITAEAAAA==",
        },
    }
)

DOCS_LIST = RealList(
    {
        "proof": {
            "type": "EcdsaSecp256k1Signature2019",
            "proofPurpose": "assertionMethod",
            "verificationMethod": _AGENT_KEY,
            "created": "2024-06-07T20:53:40.177613Z",
            "jws": "eyJiNjQiOmZhbHNlLCJjcml0IjpbImI2NCJdLCJhbGciOiJFUzI1NksifQ..-JD-ggFe1JgWd7Nx"
            "UqOvmkHwuO-B2U9V-Nqn2jIsXg1TN8G_Suy__ZNSUwIRPdhFXKy3YXvisfrtheDdOemu7g",
        },
        "@context": [
            "https://www.w3.org/2018/credentials/v1",
            "https://w3c.github.io/vc-bitstring-status-list/contexts/2021/v1.jsonld",
        ],
        "type": ["VerifiableCredential", "StatusList2021Credential"],
        "id": "http://localhost:8085/credential-status/c2688c98-ecb5-4dd3-87e8-a689b8fa84dd",
        "issuer": AGENT_ISSUER,
        "issuanceDate": 1717793619,
        "credentialSubject": {
            "type": "StatusList2021",
            "statusPurpose": "Revocation",
            "encodedList": "H4sIAAAAAAAA_-3BMQ0AAAACIGf_0MbwARoAAAAAAAAAAAAAAAAAAADgbbmHB0sAQAAA",
        },
    }
)
