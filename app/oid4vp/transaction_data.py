"""OpenID4VP 1.0 transaction data: what a backend asks a person to authorize with their
credential (a payment, a signature), and the wallet's confirmation of it. No database here.

- The request carries ``transaction_data`` (§5.1): a non-empty array of strings, each the
  base64url encoding of one JSON object with a ``type`` and the ``credential_ids`` of the DCQL
  credential queries that may authorize it. A wallet that does not know a type must refuse
  the whole request (§5.1, §8.4), so only the types below are ever sent, each checked against
  its definition first.
- An SD-JWT VC answer confirms it in the key binding JWT (Appendix B.3.3):
  ``transaction_data_hashes``, each the hash of one entry's base64url string exactly as it was
  sent (no decoding before hashing), and ``transaction_data_hashes_alg`` when the entry
  offered algorithms. Transaction data needs cryptographic holder binding (§B.3.3), which every
  credential query of this service requires.
- mdoc: OpenID4VP 1.0 §B.2 leaves the carriage to each document type's specification (a
  data element in ``DeviceSigned``), and no public text defines one for the types below, so
  transaction data is refused for mdoc; W3C VCs (``jwt_vc_json``) have no place for it at all.

The types, from their public definitions:

- ``urn:eudi:sca:payment:1``: EUDI Wallet TS12 (Strong Customer Authentication) §4.2 and
  §4.3.1, whose ``payload`` follows TS12's JSON Schema ``ts12-urn-eudi-sca-payment-1``.
- ``qes_authorization`` and ``qcert_creation_acceptance``: the remote signing types of the
  EU reference verifier (``eudi-srv-verifier-endpoint``, ``QesAuthorization`` and
  ``QCertCreationAcceptance``, after CSC API v2.0's transaction data).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AnyUrl,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)

PAYMENT = "urn:eudi:sca:payment:1"
QES_AUTHORIZATION = "qes_authorization"
QCERT_CREATION_ACCEPTANCE = "qcert_creation_acceptance"
# §B.3.3: sha-256 is the default and the one every implementation supports; the only one
# this verifier hashes with, so the only one it offers.
HASH_ALG = "sha-256"
MAX_ENTRIES = 10
MAX_ENTRY_BYTES = 8 * 1024

NonEmpty = Annotated[str, Field(min_length=1)]
Number = StrictInt | StrictFloat


class TransactionDataError(ValueError):
    """An entry that cannot be sent: ``code`` says which rule, ``reason`` in words."""

    # §8.4's invalid_transaction_data, unless a more precise code is given.
    code = "INVALID_TRANSACTION_DATA"

    def __init__(self, reason: str, code: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        if code is not None:
            self.code = code


class _Strict(BaseModel):
    # §8.4 (invalid_transaction_data): a wallet refuses unknown fields, wrong types and
    # missing required ones, so they are refused here before anything is sent.
    model_config = ConfigDict(extra="forbid", strict=True)


class _Entry(_Strict):
    """§5.1 and §B.3.3: what every entry carries, whatever its type."""

    type: str
    credential_ids: list[NonEmpty] = Field(min_length=1)
    transaction_data_hashes_alg: list[NonEmpty] | None = Field(default=None, min_length=1)


# ---------------------------------------------------------------- TS12 payment


class _Payee(_Strict):
    name: str
    id: str
    logo: AnyUrl | None = None
    website: AnyUrl | None = None


class _Pisp(_Strict):
    legal_name: str
    brand_name: str
    domain_name: str


class _MitOptions(_Strict):
    amount_variable: StrictBool | None = None
    min_amount: Number | None = None
    max_amount: Number | None = None
    total_amount: Number | None = None
    initial_amount: Number | None = None
    initial_amount_number: StrictInt | None = None
    apr: Number | None = None


class _Recurrence(_Strict):
    start_date: AwareDatetime | None = None
    end_date: AwareDatetime | None = None
    number: StrictInt | None = None
    frequency: Literal[
        "INDA",
        "DAIL",
        "WEEK",
        "TOWK",
        "TWMN",
        "MNTH",
        "TOMN",
        "QUTR",
        "FOMN",
        "SEMI",
        "YEAR",
        "TYEA",
    ]
    mit_options: _MitOptions | None = None


class _PaymentPayload(_Strict):
    """TS12 §4.3.1 (its JSON Schema: additionalProperties false at the top)."""

    transaction_id: str = Field(min_length=1, max_length=36)
    date_time: AwareDatetime | None = None
    payee: _Payee
    pisp: _Pisp | None = None
    execution_date: AwareDatetime | None = None
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    amount: Number
    amount_estimated: StrictBool | None = None
    amount_earmarked: StrictBool | None = None
    sct_inst: StrictBool | None = None
    recurrence: _Recurrence | None = None

    @model_validator(mode="after")
    def _execution_date_alone(self) -> _PaymentPayload:
        if self.execution_date is not None and self.recurrence is not None:
            raise ValueError("execution_date MUST NOT be present when recurrence is present")
        return self


class _Payment(_Entry):
    """TS12 §4.2: ``transaction_data_hashes_alg`` and ``payload`` are REQUIRED."""

    type: Literal["urn:eudi:sca:payment:1"]
    transaction_data_hashes_alg: list[NonEmpty] = Field(min_length=1)
    payload: _PaymentPayload


# ---------------------------------------------------------------- remote signing


class _DocumentAccessMethod(_Strict):
    document_access_mode: Literal["public", "OTP", "Basic_Auth", "Digest_Auth", "OAuth_20"]
    oneTimePassword: NonEmpty | None = None

    @model_validator(mode="after")
    def _otp(self) -> _DocumentAccessMethod:
        if self.document_access_mode == "OTP" and self.oneTimePassword is None:
            raise ValueError("oneTimePassword is required when document_access_mode is OTP")
        return self


class _DocumentDigest(_Strict):
    label: NonEmpty
    hash: str | None = None
    hashAlgorithmOID: NonEmpty | None = None
    documentLocation_uri: AnyUrl | None = None
    documentLocation_method: _DocumentAccessMethod | None = None
    dtbsr: str | None = Field(default=None, alias="DTBS/R")
    dtbsr_alg: NonEmpty | None = Field(default=None, alias="DTBS/RHashAlgorithmOID")

    @model_validator(mode="after")
    def _pairs(self) -> _DocumentDigest:
        pairs = (
            ("hash", "hashAlgorithmOID", self.hash, self.hashAlgorithmOID),
            ("DTBS/R", "DTBS/RHashAlgorithmOID", self.dtbsr, self.dtbsr_alg),
            (
                "documentLocation_uri",
                "documentLocation_method",
                self.documentLocation_uri,
                self.documentLocation_method,
            ),
        )
        for first, second, one, other in pairs:
            if (one is None) != (other is None):
                raise ValueError(f"either provide both {first} and {second}, or none")
        if self.hash is None and self.dtbsr is None:
            raise ValueError("either hash or DTBS/R must be present")
        return self


class _QesAuthorization(_Entry):
    type: Literal["qes_authorization"]
    signatureQualifier: NonEmpty | None = None
    credentialID: NonEmpty | None = None
    documentDigests: list[_DocumentDigest] = Field(min_length=1)
    processID: NonEmpty | None = None

    @model_validator(mode="after")
    def _which_key(self) -> _QesAuthorization:
        if self.signatureQualifier is None and self.credentialID is None:
            raise ValueError("either credentialID or signatureQualifier must be present")
        return self


class _QcertCreationAcceptance(_Entry):
    type: Literal["qcert_creation_acceptance"]
    QC_terms_conditions_uri: AnyUrl
    QC_hash: NonEmpty
    QC_hashAlgorithmOID: NonEmpty


DEFINITIONS: dict[str, type[_Entry]] = {
    PAYMENT: _Payment,
    QES_AUTHORIZATION: _QesAuthorization,
    QCERT_CREATION_ACCEPTANCE: _QcertCreationAcceptance,
}
TYPES = tuple(DEFINITIONS)


# ---------------------------------------------------------------- the request side


def prepared(
    entries: Sequence[Any], enabled: Iterable[str], credential_ids: Sequence[str]
) -> list[str]:
    """The ``transaction_data`` strings to send for ``entries``: each checked against its
    type's definition, and encoded once (the string is what the wallet hashes, so it is kept
    as sent).

    ``enabled`` are the types the organization allows; ``credential_ids`` the credential
    queries of the request. An entry without ``credential_ids`` is for every one of them;
    without ``transaction_data_hashes_alg`` it is given ``["sha-256"]`` (TS12 requires it).
    """
    if not isinstance(entries, list) or not entries:
        raise TransactionDataError("transaction_data must be a non-empty array of objects")
    if len(entries) > MAX_ENTRIES:
        raise TransactionDataError(f"transaction_data takes at most {MAX_ENTRIES} entries")
    allowed = set(enabled)
    return [
        _prepared_entry(index, entry, allowed, credential_ids)
        for index, entry in enumerate(entries, 1)
    ]


def _prepared_entry(
    index: int, entry: Any, allowed: set[str], credential_ids: Sequence[str]
) -> str:
    where = f"transaction_data entry {index}"
    if not isinstance(entry, dict):
        raise TransactionDataError(f"{where} is not an object")
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind:
        raise TransactionDataError(f"{where} has no type")
    if kind not in DEFINITIONS:
        raise TransactionDataError(
            f"{where}: type {kind} is not one this service sends (" + ", ".join(TYPES) + ")",
            code="TRANSACTION_DATA_TYPE_UNKNOWN",
        )
    if kind not in allowed:
        raise TransactionDataError(
            f"{where}: type {kind} is not enabled for this organization "
            "(transaction_data_types in its settings)",
            code="TRANSACTION_DATA_TYPE_NOT_ENABLED",
        )
    filled = {
        **entry,
        "credential_ids": entry.get("credential_ids", list(credential_ids)),
        "transaction_data_hashes_alg": entry.get("transaction_data_hashes_alg", [HASH_ALG]),
    }
    try:
        # JSON mode: dates and addresses arrive as the strings JSON has for them.
        checked = DEFINITIONS[kind].model_validate_json(json.dumps(filled))
    except ValidationError as exc:
        raise TransactionDataError(f"{where} ({kind}): {_first_problem(exc)}") from None
    unknown = [name for name in checked.credential_ids if name not in credential_ids]
    if unknown:
        raise TransactionDataError(
            f"{where}: credential_ids names {unknown[0]}, which is no credential query of the "
            "request (" + ", ".join(credential_ids) + ")"
        )
    if checked.transaction_data_hashes_alg and HASH_ALG not in checked.transaction_data_hashes_alg:
        raise TransactionDataError(
            f"{where}: transaction_data_hashes_alg must offer {HASH_ALG}, the algorithm this "
            "verifier checks"
        )
    encoded = encode(filled)
    if len(encoded) > MAX_ENTRY_BYTES:
        raise TransactionDataError(f"{where} is larger than {MAX_ENTRY_BYTES} bytes encoded")
    return encoded


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    path = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{path}: {message}" if path else message


def encode(entry: dict[str, Any]) -> str:
    """§5.1: base64url (no padding) of the entry's JSON, compact and UTF-8."""
    text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def decode(encoded: str) -> dict[str, Any]:
    """One of the strings this service sent, as the object it encodes."""
    padded = encoded + "=" * (-len(encoded) % 4)
    return json.loads(base64.urlsafe_b64decode(padded))


def entry_hash(encoded: str) -> str:
    """§B.3.3: the hash of the base64url string as sent, itself base64url (no padding)."""
    digest = hashlib.sha256(encoded.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


# ---------------------------------------------------------------- the answer side


class Unconfirmed(Exception):
    """Transaction data the key binding JWT does not confirm; ``reason`` for the record."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_confirmed(key_binding: dict[str, Any], sent: Sequence[str]) -> None:
    """Every entry sent must be confirmed by the key binding JWT (§B.3.3): its hash among
    ``transaction_data_hashes``, made with ``transaction_data_hashes_alg`` (required when the
    entry offered algorithms, sha-256 otherwise). Raises ``Unconfirmed`` naming the first entry
    that is not. The request has one credential query, so every entry is the one credential's
    to confirm (where several credentials answer, an entry is confirmed by one of them)."""
    if not sent:
        return
    hashes = key_binding.get("transaction_data_hashes")
    alg = key_binding.get("transaction_data_hashes_alg")
    for index, encoded in enumerate(sent, 1):
        entry = decode(encoded)
        what = f"Transaction data {index} ({entry.get('type')})"
        offered = entry.get("transaction_data_hashes_alg")
        if hashes is None:
            raise Unconfirmed(
                f"{what} was not confirmed by the wallet: its key binding carries no "
                "transaction_data_hashes"
            )
        if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
            raise Unconfirmed(
                f"{what} was not confirmed by the wallet: transaction_data_hashes is not an "
                "array of strings"
            )
        if offered is not None and alg is None:
            raise Unconfirmed(
                f"{what} was not confirmed by the wallet: its key binding names no "
                "transaction_data_hashes_alg"
            )
        if (alg or HASH_ALG) != HASH_ALG:
            raise Unconfirmed(
                f"{what} was not confirmed by the wallet: transaction_data_hashes_alg {alg} is "
                f"not the {HASH_ALG} the request offered"
            )
        if entry_hash(encoded) not in hashes:
            raise Unconfirmed(
                f"{what} was not confirmed by the wallet: no transaction_data_hashes entry is "
                "its hash"
            )
