"""The Status List byte array: the draft's own examples decode to the statuses it lists, bits
are read from the least significant end, and inflation is capped."""

from __future__ import annotations

import zlib

import pytest

from app.sdjwt.encoding import b64url_encode
from app.statuslist import StatusError, StatusList, decode_status_list, encode_status_list

# Token Status List 4.1 and 4.2 examples.
ONE_BIT = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]
TWO_BITS = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]


@pytest.mark.parametrize(
    ("lst", "bits", "data", "statuses"),
    [
        ("eNrbuRgAAhcBXQ", 1, bytes([0xB9, 0xA3]), ONE_BIT),
        ("eNo76fITAAPfAgc", 2, bytes([0xC9, 0x44, 0xF9]), TWO_BITS),
    ],
)
def test_the_drafts_examples_decode(lst: str, bits: int, data: bytes, statuses: list[int]) -> None:
    status_list = decode_status_list({"bits": bits, "lst": lst})
    assert status_list.data == data
    assert [status_list.value(i) for i in range(len(statuses))] == statuses


@pytest.mark.parametrize(
    ("statuses", "bits", "lst"), [(ONE_BIT, 1, "eNrbuRgAAhcBXQ"), (TWO_BITS, 2, "eNo76fITAAPfAgc")]
)
def test_encoding_reproduces_the_drafts_examples(statuses: list[int], bits: int, lst: str) -> None:
    assert encode_status_list(statuses, bits) == {"bits": bits, "lst": lst}


@pytest.mark.parametrize("bits", [1, 2, 4, 8])
def test_values_round_trip_for_every_bit_size(bits: int) -> None:
    values = [(i * 7) % (1 << bits) for i in range(37)]
    decoded = decode_status_list(encode_status_list(values, bits))
    assert [decoded.value(i) for i in range(len(values))] == values


def test_an_index_past_the_end_is_refused() -> None:
    status_list = StatusList(bits=2, data=bytes(2))  # 8 entries
    assert status_list.value(7) == 0
    with pytest.raises(StatusError, match="Status index 8 is outside the status list"):
        status_list.value(8)


def test_decompression_is_capped() -> None:
    lst = b64url_encode(zlib.compress(bytes(1001)))
    assert decode_status_list(
        {"bits": 1, "lst": b64url_encode(zlib.compress(bytes(1000)))}, max_bytes=1000
    )
    with pytest.raises(StatusError, match="larger than 1000 bytes once decompressed"):
        decode_status_list({"bits": 1, "lst": lst}, max_bytes=1000)


def test_a_zip_bomb_is_refused_without_inflating_it() -> None:
    bomb = zlib.compress(bytes(64 * 1024 * 1024), 9)  # 64 MiB of zeros in about 64 KiB
    assert len(bomb) < 100_000
    with pytest.raises(StatusError, match="larger than"):
        decode_status_list({"bits": 1, "lst": b64url_encode(bomb)})


@pytest.mark.parametrize(
    ("status_list", "reason"),
    [
        ({"bits": 3, "lst": "eNrbuRgAAhcBXQ"}, "bits is not 1, 2, 4 or 8"),
        ({"bits": True, "lst": "eNrbuRgAAhcBXQ"}, "bits is not 1, 2, 4 or 8"),
        ({"bits": 1, "lst": "eNrb+RgAAhcBXQ=="}, "not base64url"),
        ({"bits": 1, "lst": 5}, "not base64url"),
        # The last character's unused bits are set: a second spelling of the same bytes.
        ({"bits": 1, "lst": "eNrbuRgAAhcBXR"}, "not base64url"),
        ({"bits": 1, "lst": ""}, "not base64url"),
        ({"bits": 1, "lst": b64url_encode(b"plain bytes")}, "not ZLIB-compressed"),
        ({"bits": 1, "lst": b64url_encode(zlib.compress(b"abc")[:-3])}, "truncated"),
        ({"bits": 1, "lst": b64url_encode(zlib.compress(b"abc") + b"x")}, "data after its end"),
        ("not an object", "no status_list object"),
    ],
)
def test_malformed_status_lists_are_refused(status_list: object, reason: str) -> None:
    with pytest.raises(StatusError, match=reason):
        decode_status_list(status_list)


def test_encoding_refuses_values_that_do_not_fit() -> None:
    with pytest.raises(ValueError, match="does not fit in 1 bits"):
        encode_status_list([2], 1)
