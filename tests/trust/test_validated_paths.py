"""A chain validated once is kept: the same chain under the same anchors is answered as a whole
walk would answer it, with its validity dates checked again at every call."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from app.recently_used import RecentlyUsed
from app.trust import TrustError
from app.trust import x5c as x5c_module
from app.trust.x5c import VALIDATED_PATHS, ValidatedPath, validate_chain
from tests.trust.trust_support import NOW, Issued, make_cert


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    VALIDATED_PATHS.clear()
    yield
    VALIDATED_PATHS.clear()


@pytest.fixture
def pki() -> dict[str, Issued]:
    root = make_cert("Root CA", ca=True, not_after=NOW + timedelta(days=365))
    intermediate = make_cert("Issuing CA", issuer=root, ca=True, path_length=0)
    leaf = make_cert("Document Signer", issuer=intermediate, not_after=NOW + timedelta(days=10))
    return {"root": root, "intermediate": intermediate, "leaf": leaf}


@pytest.fixture
def signature_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the certificates whose signatures were verified."""
    checked: list[str] = []
    real = x5c_module._signed_by

    def counting(cert, issuer) -> bool:
        if cert.issuer == issuer.subject:  # otherwise no signature is verified
            checked.append(cert.subject.rfc4514_string())
        return real(cert, issuer)

    monkeypatch.setattr(x5c_module, "_signed_by", counting)
    return checked


def test_a_chain_seen_before_is_not_verified_again(
    pki: dict[str, Issued], signature_checks: list[str]
) -> None:
    chain, anchors = [pki["leaf"].cert, pki["intermediate"].cert], [pki["root"].cert]
    first = validate_chain(chain, anchors, NOW)
    checked_once = len(signature_checks)
    again = validate_chain(list(chain), list(anchors), NOW + timedelta(days=1))
    assert again == first == (pki["leaf"].cert, pki["intermediate"].cert, pki["root"].cert)
    assert checked_once == 2 and len(signature_checks) == checked_once


def test_the_dates_are_checked_again_with_the_reason_a_whole_walk_gives(
    pki: dict[str, Issued],
) -> None:
    chain, anchors = [pki["leaf"].cert, pki["intermediate"].cert], [pki["root"].cert]
    validate_chain(chain, anchors, NOW)
    with pytest.raises(TrustError, match=r"^Issuer certificate has expired$"):
        validate_chain(chain, anchors, NOW + timedelta(days=11))
    with pytest.raises(TrustError, match=r"^Issuer certificate is not valid yet$"):
        validate_chain(chain, anchors, NOW - timedelta(days=2))
    VALIDATED_PATHS.clear()
    with pytest.raises(TrustError, match=r"^Issuer certificate has expired$"):
        validate_chain(chain, anchors, NOW + timedelta(days=11))


def test_an_expired_intermediate_is_found_on_a_kept_path_too(pki: dict[str, Issued]) -> None:
    intermediate = make_cert(
        "Short CA", issuer=pki["root"], ca=True, path_length=0, not_after=NOW + timedelta(days=2)
    )
    leaf = make_cert("Signer", issuer=intermediate)
    chain, anchors = [leaf.cert, intermediate.cert], [pki["root"].cert]
    validate_chain(chain, anchors, NOW)
    with pytest.raises(TrustError, match=r"^Certificate 2 in the chain has expired$"):
        validate_chain(chain, anchors, NOW + timedelta(days=3))


def test_a_chain_kept_under_one_anchor_is_not_trusted_under_another(
    pki: dict[str, Issued],
) -> None:
    chain = [pki["leaf"].cert, pki["intermediate"].cert]
    validate_chain(chain, [pki["root"].cert], NOW)
    other_root = make_cert("Other Root", ca=True)
    with pytest.raises(TrustError, match="does not lead to a trusted anchor"):
        validate_chain(chain, [other_root.cert], NOW)


def test_a_refused_chain_is_walked_again(
    pki: dict[str, Issued], signature_checks: list[str]
) -> None:
    chain, anchors = [pki["leaf"].cert, pki["intermediate"].cert], [make_cert("Other").cert]
    for _ in range(2):
        with pytest.raises(TrustError, match="does not lead to a trusted anchor"):
            validate_chain(chain, anchors, NOW)
    assert signature_checks == ["CN=Document Signer", "CN=Document Signer"]


def test_the_cache_keeps_the_most_recently_used_paths() -> None:
    cache: RecentlyUsed[tuple, ValidatedPath] = RecentlyUsed(size=2)
    path = ValidatedPath(path=(), from_chain=0)
    cache.put(("a",), path)
    cache.put(("b",), path)
    assert cache.get(("a",)) is path  # "a" is now the most recent
    cache.put(("c",), path)
    assert cache.get(("b",)) is None
    assert cache.get(("a",)) is path and cache.get(("c",)) is path
