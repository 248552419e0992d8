"""Zero-knowledge fixtures, made once per run: proving takes seconds of CPU, so the tests share
a handful of proofs (session scope) and vary the answer around them.

Without the ``zk`` extra (``pip install -e '.[zk]'``) these tests are not collected; the refusal
of a ZK verification without it is tested with the rest of the verification API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from app.zk import available

collect_ignore_glob = [] if available() else ["test_*.py"]

ORIGIN = "https://verity.test"


@dataclass(frozen=True)
class Proved:
    """One proof and everything it was made over."""

    authority: object
    transcript: bytes
    timestamp: datetime
    proof: bytes


@pytest.fixture(scope="session")
def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(scope="session")
def test_authority(now):
    from zk_support import authority

    return authority(now)


@pytest.fixture(scope="session")
def fixture_transcript() -> bytes:
    from app.mdoc import dc_api_session_transcript

    return dc_api_session_transcript(ORIGIN, "zk-fixture-nonce", None)


@pytest.fixture(scope="session")
def proved_true(now, test_authority, fixture_transcript) -> Proved:
    """An isrg-rust proof that age_over_18 is true (circuit version 6)."""
    from zk_support import end_of_day, licence, prove

    timestamp = end_of_day(now)
    specimen = licence(test_authority, fixture_transcript, now)
    proof = prove(specimen, fixture_transcript, timestamp)
    return Proved(test_authority, fixture_transcript, timestamp, proof)


@pytest.fixture(scope="session")
def proved_false(now, test_authority, fixture_transcript) -> Proved:
    """An honest isrg-rust proof that age_over_18 is false, of a licence that says so."""
    from zk_support import end_of_day, licence, prove

    timestamp = end_of_day(now)
    specimen = licence(test_authority, fixture_transcript, now, over_18=False)
    proof = prove(specimen, fixture_transcript, timestamp, value=False)
    return Proved(test_authority, fixture_transcript, timestamp, proof)
