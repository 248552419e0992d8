"""What ``make bench`` times as "signing" is a credential worth issuing: it verifies under the
issuer's key and discloses the bench's claims. No timing here."""

from __future__ import annotations

import pytest

from bench import issuing


def test_the_bench_signs_a_credential_that_verifies_with_its_claims():
    floor, sign, issuer_jwk = issuing.in_process_operations()

    floor()
    issuing.check(sign(), issuer_jwk)


def test_the_bench_check_refuses_another_key_and_a_missing_disclosure():
    _, sign, issuer_jwk = issuing.in_process_operations()
    _, _, other_jwk = issuing.in_process_operations()
    credential = sign()

    with pytest.raises(issuing.SigningError, match="does not verify"):
        issuing.check(credential, other_jwk)
    with pytest.raises(issuing.SigningError, match="disclosures"):
        issuing.check(credential.split("~", 1)[0] + "~", issuer_jwk)
