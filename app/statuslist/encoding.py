"""The Status List data structure (Token Status List 4.1, 4.2): a byte array of status values,
``bits`` per token, packed from the least significant bit of each byte, DEFLATE-compressed in
the ZLIB format and base64url-encoded as ``lst``."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.sdjwt import SdJwtError
from app.sdjwt.encoding import b64url_decode, b64url_encode
from app.statuslist.errors import StatusError

# Token Status List 7.1.
VALID = 0x00
INVALID = 0x01
SUSPENDED = 0x02
ALLOWED_BITS = (1, 2, 4, 8)
# Decompressed size limit. DEFLATE inflates up to about 1000:1, so without a limit a
# 256 KiB download could become a quarter of a gigabyte. 16 MiB holds 134 million 1-bit entries.
DEFAULT_MAX_DECOMPRESSED = 16 * 1024 * 1024


@dataclass(frozen=True)
class StatusList:
    bits: int
    data: bytes

    @property
    def size(self) -> int:
        """How many entries the byte array holds."""
        return len(self.data) * 8 // self.bits

    def value(self, idx: int) -> int:
        """The status at ``idx``: byte ``idx // (8 / bits)``, counted from its least
        significant bit (Token Status List 4.1 step 3, 11.1)."""
        if not 0 <= idx < self.size:
            # Token Status List 8.3 step 6: out of bounds, no statement can be made.
            raise StatusError(
                f"Status index {idx} is outside the status list ({self.size} entries)"
            )
        per_byte = 8 // self.bits
        byte = self.data[idx // per_byte]
        return (byte >> ((idx % per_byte) * self.bits)) & ((1 << self.bits) - 1)


def decode_status_list(
    status_list: Any, *, max_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> StatusList:
    """Read a ``status_list`` claim (Token Status List 4.2) into its byte array."""
    if not isinstance(status_list, dict):
        raise StatusError("Status list token has no status_list object")
    bits, lst = status_list.get("bits"), status_list.get("lst")
    if isinstance(bits, bool) or bits not in ALLOWED_BITS:
        raise StatusError("Status list bits is not 1, 2, 4 or 8")
    try:
        compressed = b64url_decode(lst, "Status list lst")
    except SdJwtError as exc:
        raise StatusError("Status list lst is not base64url") from exc
    return status_list_from_bytes(bits, compressed, max_bytes=max_bytes)


def status_list_from_bytes(
    bits: Any, compressed: bytes, *, max_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> StatusList:
    """The byte array of a list whose ``lst`` is already bytes (the CWT form carries it so)."""
    if isinstance(bits, bool) or bits not in ALLOWED_BITS:
        raise StatusError("Status list bits is not 1, 2, 4 or 8")
    return StatusList(bits, _inflate(compressed, max_bytes))


def _inflate(compressed: bytes, max_bytes: int) -> bytes:
    return inflate(compressed, max_bytes=max_bytes, what="Status list lst")


# GZIP framing (RFC 1952), as the W3C status lists require: zlib's window bits plus 16.
GZIP_WBITS = 16 + zlib.MAX_WBITS


def inflate(compressed: bytes, *, max_bytes: int, what: str, gzip: bool = False) -> bytes:
    """Decompress a list in the ZLIB format (Token Status List) or, with ``gzip``, the GZIP
    format (the W3C lists), never inflating more than ``max_bytes``. ``what`` names the
    compressed value in reasons."""
    inflater = zlib.decompressobj(GZIP_WBITS if gzip else zlib.MAX_WBITS)
    try:
        # Ask for one byte more than allowed: getting it proves the list is too large,
        # without ever inflating more than that.
        data = inflater.decompress(compressed, max_bytes + 1)
    except zlib.error as exc:
        form = "GZIP" if gzip else "ZLIB"
        raise StatusError(f"{what} is not {form}-compressed data") from exc
    if len(data) > max_bytes or inflater.unconsumed_tail:
        raise StatusError(f"Status list is larger than {max_bytes} bytes once decompressed")
    if not inflater.eof or inflater.unused_data:
        raise StatusError(f"{what} is truncated or has data after its end")
    return data


def read_msb_first(data: bytes, index: int, size: int = 1) -> int:
    """The ``size`` bits of entry ``index``, index 0 being the left-most (most significant)
    bit of the first byte, as both W3C lists write them (Bitstring Status List §6.1,
    StatusList2021 "Bitstring Encoding")."""
    entries = len(data) * 8 // size
    if not 0 <= index < entries:
        raise StatusError(f"Status index {index} is outside the status list ({entries} entries)")
    value = 0
    for position in range(index * size, (index + 1) * size):
        value = (value << 1) | ((data[position // 8] >> (7 - position % 8)) & 1)
    return value


def encode_status_list(values: Sequence[int], bits: int) -> dict[str, Any]:
    """The ``status_list`` claim for these values, for issuers (and tests)."""
    if bits not in ALLOWED_BITS:
        raise ValueError("bits must be 1, 2, 4 or 8")
    per_byte = 8 // bits
    data = bytearray((len(values) + per_byte - 1) // per_byte)
    for idx, value in enumerate(values):
        if not 0 <= value < (1 << bits):
            raise ValueError(f"Status {value} does not fit in {bits} bits")
        data[idx // per_byte] |= value << ((idx % per_byte) * bits)
    # Token Status List 4.1 step 4: the highest compression level is recommended.
    return {"bits": bits, "lst": b64url_encode(zlib.compress(bytes(data), 9))}
