"""The embedded proof of a StatusList2021 list, as the Hyperledger Identus cloud agent makes it.

Both forms follow the cloud agent's source, not the suites' specifications, where they differ
(pollux/vc-jwt/src/main/scala/org/hyperledger/identus/pollux/vc/jwt/Proof.scala,
``EcdsaSecp256k1Signature2019ProofGenerator`` and ``EddsaJcs2022ProofGenerator``; the list is
signed in ``W3CCredential.toJsonWithEmbeddedProof``, VerifiableCredentialPayload.scala, and
checked in ``CredentialVerification.verifyCredentialStatus`` there and in sdk-ts
``IsCredentialRevoked.ts``):

- ``EcdsaSecp256k1Signature2019``: ``jws`` is a detached JWS whose header is
  ``{"b64":false,"crit":["b64"],"alg":"ES256K"}`` (RFC 7797), over the URDNA2015 N-Quads of
  the list without its ``proof`` (shared/json/.../Json.scala ``canonicalizeJsonLDoRdf``). The
  signing input is ``ASCII(BASE64URL(header)) || "." || UTF-8(N-Quads)``: no hashing of proof
  options and document and no concatenation of hashes as the 2019 Linked Data Signatures
  draft describes; the proof options are not signed at all.
- ``DataIntegrityProof`` with ``cryptoSuite`` ``eddsa-jcs-2022`` (the agent signs with it when
  the issuer's assertion key is Ed25519): ``proofValue`` is base58btc multibase of an Ed25519
  signature over the JCS (RFC 8785) bytes of the list without its proof, again without the
  proof configuration hash that Data Integrity EdDSA Cryptosuites v1.0 §3.3 adds. A list
  signed by the specification's construction does not verify here.

The key comes from ``verificationMethod``: a ``data:application/json;base64,`` URI holding an
``EcdsaSecp256k1VerificationKey2019`` (``publicKeyJwk``) or a ``Multikey``
(``publicKeyMultibase``, ``z`` + base58btc of ``0xed01`` and the Ed25519 key), as the agent
writes it, or a DID URL of a long-form did:prism, resolved from its own text. Anything else is
refused. A data: URI says nothing about who holds the key, so the key must be one of the
credential issuer's: the very key its credential was verified with, or, when the issuer is a
long-form did:prism (whose keys its text fixes), one of its assertionMethod keys.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from app.didcomm import PrismDidError, prism
from app.didcomm.encoding import b58decode
from app.statuslist.errors import StatusError
from app.statuslist.jsonld import canonize, jcs
from app.trust.issuers import ResolvedIssuer

SECP256K1_2019 = "EcdsaSecp256k1Signature2019"
SECP256K1_KEY_2019 = "EcdsaSecp256k1VerificationKey2019"
DATA_INTEGRITY = "DataIntegrityProof"
EDDSA_JCS_2022 = "eddsa-jcs-2022"
DATA_URI_PREFIX = "data:application/json;base64,"
# Multicodec ed25519-pub, as the agent prefixes the key (Proof.scala ed25519MultiBaseHeader).
ED25519_MULTICODEC = b"\xed\x01"
PRISM_PREFIX = "did:prism:"
_TO_STANDARD = str.maketrans("-_", "+/")
# The detached JWS header the agent writes (Proof.scala), byte for byte.
JWS_HEADER = b'{"b64":false,"crit":["b64"],"alg":"ES256K"}'
# Order of the secp256k1 group: signatures are written with s <= N/2 ("low-S").
_SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def sign_secp256k1_2019(
    document: dict[str, Any],
    key: ec.EllipticCurvePrivateKey,
    verification_method: str,
    created: str,
) -> dict[str, Any]:
    """``document`` with an ``EcdsaSecp256k1Signature2019`` proof made as the agent makes it
    (see the module docstring), so what ``verify_list_proof`` and the agent check holds. The
    signature is low-S, which every secp256k1 verifier accepts. A token key signs too: it
    returns DER like any ``cryptography`` key."""
    if not isinstance(key.curve, ec.SECP256K1):
        raise ValueError("EcdsaSecp256k1Signature2019 is signed with a secp256k1 key")
    unsigned = {name: value for name, value in document.items() if name != "proof"}
    header = _b64url(JWS_HEADER)
    signing_input = header.encode("ascii") + b"." + canonize(unsigned).encode("utf-8")
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    if s > _SECP256K1_N // 2:
        s = _SECP256K1_N - s
    signature = _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    proof = {
        "type": SECP256K1_2019,
        "proofPurpose": "assertionMethod",
        "verificationMethod": verification_method,
        "created": created,
        "jws": f"{header}..{signature}",
    }
    return {**unsigned, "proof": proof}


def secp256k1_key_uri(jwk: dict[str, str]) -> str:
    """The ``verificationMethod`` of a list signed with the secp256k1 key ``jwk``, as the agent
    writes it (Proof.scala ``EcdsaSecp256k1Signature2019ProofGenerator``): a
    ``data:application/json;base64,`` URI of an ``EcdsaSecp256k1VerificationKey2019``. The
    Identus SDK reads nothing else (``IsCredentialRevoked.ts`` takes what follows the comma
    as standard base64 JSON with ``publicKeyJwk``; a DID URL fails "CredentialStatus proof
    invalid verificationMethod"), so the base64 is the standard alphabet, padded, as the
    agent's is. The proof is not signed, so this changes nothing a verifier canonicalizes."""
    method = {
        "@context": ["https://w3id.org/security/v1"],
        "type": SECP256K1_KEY_2019,
        "publicKeyJwk": {
            "crv": jwk["crv"],
            "key_ops": ["verify"],
            "kty": jwk["kty"],
            "x": jwk["x"],
            "y": jwk["y"],
        },
    }
    text = json.dumps(method, separators=(",", ":")).encode("utf-8")
    return DATA_URI_PREFIX + base64.b64encode(text).decode("ascii")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verify_list_proof(document: dict[str, Any], issuer: ResolvedIssuer) -> None:
    """Check the list's proof and that the credential's issuer made it; StatusError if not."""
    proof = document.get("proof")
    if not isinstance(proof, dict):
        raise StatusError("Status list credential has no proof")
    if proof.get("proofPurpose") != "assertionMethod":
        raise StatusError("Status list proof is not made for assertionMethod")
    unsigned = {name: value for name, value in document.items() if name != "proof"}
    kind = proof.get("type")
    suite = proof.get("cryptoSuite", proof.get("cryptosuite"))
    if kind == SECP256K1_2019:
        key = _verification_key(proof.get("verificationMethod"), issuer)
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256k1":
            raise StatusError(f"Status list {SECP256K1_2019} proof names a key of another kind")
        _check_detached_jws(proof.get("jws"), canonize(unsigned), key)
    elif kind == DATA_INTEGRITY and suite == EDDSA_JCS_2022:
        key = _verification_key(proof.get("verificationMethod"), issuer)
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise StatusError(f"Status list {EDDSA_JCS_2022} proof names a key of another kind")
        _check_eddsa(proof.get("proofValue"), jcs(unsigned), key)
    else:
        raise StatusError(
            f"Status list proof type {kind!r} is not supported (only {SECP256K1_2019} and "
            f"{DATA_INTEGRITY} {EDDSA_JCS_2022})"
        )


def _check_detached_jws(jws: Any, nquads: str, key: ec.EllipticCurvePublicKey) -> None:
    parts = jws.split(".") if isinstance(jws, str) else []
    if len(parts) != 3 or parts[1]:
        raise StatusError("Status list proof jws is not a detached JWS")
    try:
        header = json.loads(base64_either(parts[0]))
        signature = base64_either(parts[2])
    except (ValueError, RecursionError):
        raise StatusError("Status list proof jws is not base64url-encoded JSON") from None
    if not isinstance(header, dict) or header.get("alg") != "ES256K":
        raise StatusError("Status list proof jws is not signed with ES256K")
    # RFC 7797 §3 and §6: an unencoded payload must be marked critical.
    if header.get("b64") is not False or header.get("crit") != ["b64"]:
        raise StatusError('Status list proof jws is not an unencoded-payload JWS ("b64": false)')
    signing_input = parts[0].encode("ascii") + b"." + nquads.encode("utf-8")
    if not prism.es256k_holds(key, signing_input, signature):
        raise StatusError(
            "Status list proof does not verify: the list is not as its issuer signed it"
        )


def _check_eddsa(proof_value: Any, data: bytes, key: ed25519.Ed25519PublicKey) -> None:
    signature = _multibase_58(proof_value, "Status list proofValue")
    try:
        key.verify(signature, data)
    except InvalidSignature:
        raise StatusError(
            "Status list proof does not verify: the list is not as its issuer signed it"
        ) from None


def _verification_key(method: Any, issuer: ResolvedIssuer) -> Any:
    if not isinstance(method, str) or not method:
        raise StatusError("Status list proof has no verificationMethod")
    if method.startswith(DATA_URI_PREFIX):
        key = _data_uri_key(method)
    elif method.startswith(PRISM_PREFIX) and "#" in method:
        key = _prism_key(method)
    else:
        raise StatusError(
            "Status list proof names its key in a way this service does not resolve (only "
            "data: URIs and long-form did:prism key ids)"
        )
    if _spki(key) not in {_spki(candidate) for candidate in _issuer_keys(issuer)}:
        raise StatusError("Status list is signed with a key that is not the credential issuer's")
    return key


def _data_uri_key(uri: str) -> Any:
    try:
        method = json.loads(base64_either(uri.removeprefix(DATA_URI_PREFIX)))
    except (ValueError, RecursionError):
        raise StatusError("Status list verificationMethod data: URI is not base64 JSON") from None
    if not isinstance(method, dict):
        raise StatusError("Status list verificationMethod is not a JSON object")
    if "publicKeyJwk" in method:
        return _jwk_key(method["publicKeyJwk"])
    if "publicKeyMultibase" in method:
        raw = _multibase_58(method["publicKeyMultibase"], "Status list publicKeyMultibase")
        if not raw.startswith(ED25519_MULTICODEC) or len(raw) != 34:
            raise StatusError("Status list publicKeyMultibase is not an Ed25519 key")
        return ed25519.Ed25519PublicKey.from_public_bytes(raw[2:])
    raise StatusError("Status list verificationMethod holds no publicKeyJwk or publicKeyMultibase")


def _prism_key(url: str) -> Any:
    did = url.partition("#")[0]
    try:
        document = prism.resolve(did)
    except PrismDidError as exc:
        raise StatusError(f"Status list key {url} cannot be resolved: {exc.reason}") from exc
    if url not in document.get("assertionMethod", []):
        raise StatusError(f"Status list key {url} is not an assertionMethod key of its DID")
    method = next(m for m in document["verificationMethod"] if m["id"] == url)
    return _jwk_key(method["publicKeyJwk"])


def _jwk_key(jwk: Any) -> Any:
    if isinstance(jwk, dict) and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
        try:
            return ed25519.Ed25519PublicKey.from_public_bytes(base64_either(jwk.get("x")))
        except (ValueError, TypeError):
            raise StatusError("Status list key is not an Ed25519 key") from None
    try:
        return prism.secp256k1_public_key(jwk)
    except PrismDidError as exc:
        raise StatusError(f"Status list key: {exc.reason}") from exc


def _issuer_keys(issuer: ResolvedIssuer) -> list[Any]:
    """The keys a list of this issuer may be signed with (see the module docstring)."""
    keys: list[Any] = [issuer.key]
    identifier = issuer.identifier
    if identifier.startswith(PRISM_PREFIX) and identifier.count(":") == 3:
        try:
            document = prism.resolve(identifier)
        except PrismDidError:
            return keys
        assertion = set(document.get("assertionMethod", []))
        for method in document.get("verificationMethod", []):
            if method["id"] in assertion:
                try:
                    keys.append(_jwk_key(method["publicKeyJwk"]))
                except StatusError:
                    continue
    return keys


def same_did(one: str, other: str) -> bool:
    """Whether two issuer identifiers name the same issuer: equal, or the long and short
    forms of one did:prism (both begin ``did:prism:<hash of its creation>``)."""
    if one == other:
        return True
    if not (one.startswith(PRISM_PREFIX) and other.startswith(PRISM_PREFIX)):
        return False
    return one.split(":")[2] == other.split(":")[2]


def _spki(key: Any) -> bytes:
    return key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)


def base64_either(text: Any) -> bytes:
    """base64url or base64, padded or not, as the agent (java.util.Base64 URL encoder, padded)
    and the SDK (which reads either) write it; one alphabet only."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    stripped = text.rstrip("=")
    url, standard = any(c in "-_" for c in stripped), any(c in "+/" for c in stripped)
    if url and standard:
        raise ValueError("mixed base64 alphabets")
    padded = (stripped + "=" * (-len(stripped) % 4)).translate(_TO_STANDARD)
    try:
        return base64.b64decode(padded.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("not base64") from None


def _multibase_58(value: Any, what: str) -> bytes:
    if not isinstance(value, str) or not value.startswith("z"):
        raise StatusError(f"{what} is not base58btc multibase (no z prefix)")
    try:
        return b58decode(value[1:])
    except ValueError:
        raise StatusError(f"{what} is not base58btc") from None
