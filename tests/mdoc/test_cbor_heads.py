"""The CBOR the verifiers write out by hand (Sig_structures, tag 24 data items, the dcapi
SessionTranscript) is byte for byte what ``cbor2`` writes, at every length boundary: the
signatures and digests they feed cover exactly those bytes."""

from __future__ import annotations

import hashlib

import cbor2
import pytest

from app.cose import byte_string, data_item, text_string
from app.mdoc.annex_c import session_transcript

LENGTHS = [0, 1, 23, 24, 255, 256, 65_535, 65_536, 100_000]


@pytest.mark.parametrize("length", LENGTHS)
def test_byte_strings_and_data_items_are_cbor2s(length):
    value = bytes(range(256)) * (length // 256) + bytes(length % 256)
    assert byte_string(value) == cbor2.dumps(value)
    assert data_item(value) == cbor2.dumps(cbor2.CBORTag(24, value))


@pytest.mark.parametrize("length", LENGTHS)
def test_text_strings_are_cbor2s(length):
    value = ("é" * length)[:length]
    assert text_string(value) == cbor2.dumps(value)


def test_the_dcapi_session_transcript_is_cbor2s():
    info, origin = "o2VkY2FwaaJlbm9uY2VYIA", "https://verity.example"
    info_hash = hashlib.sha256(cbor2.dumps([info, origin])).digest()
    assert session_transcript(info, origin) == cbor2.dumps([None, None, ["dcapi", info_hash]])
