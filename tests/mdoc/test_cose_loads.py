"""``app.cose.loads``, the one door hostile CBOR comes in by (mdoc DeviceResponses, Annex C
envelopes, status list CWTs, VICALs): every ill-formed or unbuildable item is the same
refusal naming what was read, whatever ``cbor2`` raises for it underneath."""

from __future__ import annotations

import pytest

from app.cose import CoseError, loads

MALFORMED = {
    "empty": b"",
    "a stray break": b"\xff",
    "a break inside a definite array": b"\x81\xff",
    "truncated": b"\x82\x01",
    "trailing bytes": b"\x01\x02",
    "trailing bytes after a long item": b"\x59\x27\x10" + bytes(10_000) + b"\x00",
    "an indefinite map ending after a key": b"\xbf\x01\xff",
    "a reserved additional information": b"\x1c",
    "a two-byte simple value below 32": b"\xf8\x10",
    "text that is not UTF-8": b"\x62\xff\xfe",
    "a byte string longer than the input": b"\x5b\xff\xff\xff\xff\xff\xff\xff\xff",
    "an array declared with 2^32 items": b"\x9b\x00\x00\x00\x01\x00\x00\x00\x00",
    "nested 5000 deep": b"\x81" * 5000 + b"\x00",
    "a tdate that is no date": b"\xc0\x63abc",
    "a full-date that is no date": b"\xd9\x03\xec\x6axxxx-01-01",
    "an epoch date beyond any year": b"\xc1\x1b\x7f\xff\xff\xff\xff\xff\xff\xff",
    "a bignum over an array": b"\xc2\x81\x01",
    "a fraction over zero": b"\xd8\x1e\x82\x01\x00",
}


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_cbor_is_one_refusal_naming_what_was_read(data):
    with pytest.raises(CoseError) as refused:
        loads(data, "Device response")

    assert refused.value.reason == "Device response is not valid CBOR"


def test_one_whole_item_is_read_with_the_types_the_readers_check():
    value = loads(b"\xa2\x01\x82\x02\x03\x61k\xd8\x18\x41\x00", "Device response")

    assert value == {1: [2, 3], "k": value["k"]}
    assert isinstance(value, dict) and isinstance(value[1], list)
    assert (value["k"].tag, value["k"].value) == (24, b"\x00")
