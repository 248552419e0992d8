"""Revocation: IETF OAuth Token Status List, and W3C Bitstring Status List and StatusList2021
(as the Hyperledger Identus cloud agent publishes it) for W3C credentials, both read by
``check_bitstring_status``. Protocol code: no database, no Flask; fetches go through
``app.trust.Fetcher``, and JSON-LD contexts are never fetched (``app.statuslist.jsonld``)."""

from app.statuslist.bitstring import check_bitstring_status
from app.statuslist.check import StatusReference, StatusResult, check_status, parse_reference
from app.statuslist.encoding import (
    INVALID,
    SUSPENDED,
    VALID,
    StatusList,
    decode_status_list,
    encode_status_list,
)
from app.statuslist.errors import StatusError
from app.statuslist.kept import bitstring_reference_to_keep, check_kept, reference_to_keep

__all__ = [
    "INVALID",
    "SUSPENDED",
    "VALID",
    "StatusError",
    "StatusList",
    "StatusReference",
    "StatusResult",
    "bitstring_reference_to_keep",
    "check_bitstring_status",
    "check_kept",
    "check_status",
    "decode_status_list",
    "encode_status_list",
    "parse_reference",
    "reference_to_keep",
]
