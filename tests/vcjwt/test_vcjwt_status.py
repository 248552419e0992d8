"""check_bitstring_status against status list credentials made by Digital Bazaar's
vc-bitstring-status-list (the bitstring, its GZIP and multibase encoding, the credential) and
signed by did-jwt / did-jwt-vc, served over HTTP by a local server."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from trust.trust_support import LocalServer
from vcjwt_support import (
    AUD,
    NONCE,
    Parties,
    Party,
    credential_v2,
    iso,
    issue,
    jose,
    present,
    run_node,
    status_entry,
)

from app.statuslist import (
    INVALID,
    SUSPENDED,
    VALID,
    StatusError,
    bitstring_reference_to_keep,
    check_bitstring_status,
    check_kept,
)
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key
from app.vcjwt import verify_vp_jwt

PATH = "/status/1"


def now() -> datetime:
    return datetime.now(UTC)


def status_list(
    url: str, *, purpose: str, revoked: tuple[int, ...], length: int, model: str
) -> dict:
    return run_node(
        {
            "kind": "status_list",
            "model": model,
            "id": url,
            "purpose": purpose,
            "length": length,
            "set": list(revoked),
        }
    )[0]["credential"]


@dataclass
class Issuer:
    """An issuer publishing its status list on the local server."""

    party: Party
    server: LocalServer

    @property
    def url(self) -> str:
        return self.server.url(PATH)

    def publish(
        self,
        *,
        purpose: str = "revocation",
        revoked: tuple[int, ...] = (),
        length: int = 131_072,
        model: str = "2.0",
        signer: Party | None = None,
        change: Callable[[dict], Any] | None = None,
        path: str = PATH,
    ) -> None:
        url = self.server.url(path)
        credential = status_list(url, purpose=purpose, revoked=revoked, length=length, model=model)
        start = iso(now() - timedelta(hours=1))
        credential["validFrom" if model == "2.0" else "issuanceDate"] = start
        if change:
            change(credential)
        self.server.add(path, issue(model, signer or self.party, credential))

    def resolved(self) -> ResolvedIssuer:
        return resolve_issuer_key(
            {}, {"iss": self.party.did}, fetcher=Fetcher(timeout=1.0), anchors=(), now=now()
        )

    def check(self, entry: Any, fetcher: Fetcher):
        return check_bitstring_status(
            entry, credential_issuer=self.resolved(), fetcher=fetcher, anchors=(), now=now()
        )


@pytest.fixture
def issuer(parties: Parties, server: LocalServer) -> Issuer:
    return Issuer(parties.issuer, server)


# --------------------------------------------------------------------------- statements


def test_a_clear_bit_means_valid(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(revoked=(3,))

    result = issuer.check(status_entry(issuer.url, 7), fetcher)

    assert (result.status, result.valid, result.reason) == (VALID, True, None)


def test_a_set_bit_in_a_revocation_list_means_revoked(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(revoked=(7,))

    result = issuer.check(status_entry(issuer.url, 7), fetcher)

    assert (result.status, result.revoked) == (INVALID, True)
    assert result.reason == "Credential has been revoked by its issuer"


def test_a_set_bit_in_a_suspension_list_means_suspended(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(purpose="suspension", revoked=(7,))

    result = issuer.check(status_entry(issuer.url, 7, "suspension"), fetcher)

    assert (result.status, result.suspended) == (SUSPENDED, True)
    assert result.reason == "Credential is suspended by its issuer"


@pytest.mark.parametrize(("index", "revoked"), [(4, False), (5, True), (6, False), (130_000, True)])
def test_index_zero_is_the_left_most_bit(
    issuer: Issuer, fetcher: Fetcher, index: int, revoked: bool
):
    # The library lays out bits as the specification says (§6.1); reading another order
    # would find index 5 in bit 2 of the first byte, and call 4 or 6 revoked instead.
    issuer.publish(revoked=(5, 130_000))

    assert issuer.check(status_entry(issuer.url, index), fetcher).revoked is revoked


def test_a_vcdm_1_1_status_list_credential_is_read_too(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(model="1.1", revoked=(9,))

    assert issuer.check(status_entry(issuer.url, 9), fetcher).revoked is True
    assert issuer.check(status_entry(issuer.url, 8), fetcher).valid is True


def test_revocation_and_suspension_entries_are_both_read(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(revoked=())
    issuer.publish(purpose="suspension", revoked=(2,), path="/status/suspended")
    entries = [
        status_entry(issuer.url, 2),
        status_entry(issuer.server.url("/status/suspended"), 2, "suspension"),
    ]

    assert issuer.check(entries, fetcher).reason == "Credential is suspended by its issuer"


def test_a_refresh_entry_is_skipped(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(revoked=())
    entries = [
        status_entry("https://issuer.example/refresh", 1, "refresh"),
        status_entry(issuer.url, 1),
    ]

    assert issuer.check(entries, fetcher).valid is True


def test_a_verified_list_is_cached_for_its_ttl(issuer: Issuer, fetcher: Fetcher):
    issuer.publish(revoked=(1,), change=lambda c: c["credentialSubject"].update(ttl=60_000))

    issuer.check(status_entry(issuer.url, 1), fetcher)
    issuer.check(status_entry(issuer.url, 2), fetcher)

    assert issuer.server.hits[PATH] == 1


def test_a_presented_credential_is_checked_end_to_end(
    parties: Parties, issuer: Issuer, fetcher: Fetcher
):
    issuer.publish(revoked=(42,))
    credential = credential_v2(parties.holder.did, credentialStatus=status_entry(issuer.url, 42))
    token = present("2.0", parties.holder, issue("2.0", parties.issuer, credential))
    verified = verify_vp_jwt(
        token, audience=AUD, nonce=NONCE, now=now(), fetcher=fetcher, anchors=()
    )

    result = check_bitstring_status(
        verified.status, credential_issuer=verified.issuer, fetcher=fetcher, anchors=(), now=now()
    )

    assert result.reason == "Credential has been revoked by its issuer"


def test_a_kept_reference_reads_the_list_again_later(issuer: Issuer):
    issuer.publish(revoked=())
    entries = [status_entry(issuer.url, 3), status_entry(issuer.url, 3, "suspension")]
    kept = json.loads(json.dumps(bitstring_reference_to_keep(entries[:1], issuer.resolved())))
    assert check_kept(kept, fetcher=Fetcher(allow_private=True), anchors=(), now=now()).valid

    issuer.publish(revoked=(3,))

    later = check_kept(kept, fetcher=Fetcher(allow_private=True), anchors=(), now=now())
    assert later.reason == "Credential has been revoked by its issuer"


def test_no_reference_is_kept_for_a_status_this_checker_cannot_read(issuer: Issuer):
    entry = {**status_entry(issuer.url, 3), "type": "RevocationList2020Status"}

    assert bitstring_reference_to_keep(entry, issuer.resolved()) is None


# --------------------------------------------------------------------------- no statement


def drop_multibase_prefix(credential: dict) -> None:
    credential["credentialSubject"]["encodedList"] = credential["credentialSubject"]["encodedList"][
        1:
    ]


def zlib_instead_of_gzip(credential: dict) -> None:
    raw = zlib.compress(bytes(16 * 1024))
    credential["credentialSubject"]["encodedList"] = (
        "u" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    )


def gzip_bomb(credential: dict) -> None:
    raw = gzip.compress(bytes(17 * 1024 * 1024), 9)
    credential["credentialSubject"]["encodedList"] = (
        "u" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    )


def expired_list(credential: dict) -> None:
    credential["validUntil"] = iso(now() - timedelta(minutes=5))


def not_a_status_list_credential(credential: dict) -> None:
    credential["type"] = ["VerifiableCredential"]


def subject_not_a_status_list(credential: dict) -> None:
    credential["credentialSubject"]["type"] = "SomethingElse"


def another_lists_id(credential: dict) -> None:
    credential["id"] = "https://issuer.example/status/other"


def unsigned_list(issuer: Issuer) -> None:
    credential = status_list(
        issuer.url, purpose="revocation", revoked=(), length=131_072, model="2.0"
    )
    issuer.server.add(PATH, jose("none", {**credential, "iss": issuer.party.did}))


def published(
    *, by_other_issuer: bool = False, **options: Any
) -> Callable[[Issuer, Parties], None]:
    def publish(issuer: Issuer, parties: Parties) -> None:
        issuer.publish(signer=parties.other_issuer if by_other_issuer else None, **options)

    return publish


def entry(index: int = 1, purpose: str = "revocation", **changes: Any) -> Callable[[str], dict]:
    return lambda url: {**status_entry(url, index, purpose), **changes}


NO_STATEMENT: list[tuple[str, Callable[[Issuer, Parties], None], Callable[[str], dict], str]] = [
    (
        "status list unreachable",
        lambda issuer, parties: None,
        entry(),
        "Status list could not be fetched",
    ),
    (
        "signed by another issuer",
        published(by_other_issuer=True),
        entry(),
        "Status list is signed by another issuer than the credential",
    ),
    (
        "unsigned status list",
        lambda issuer, parties: unsigned_list(issuer),
        entry(),
        "Status list credential is unsigned (alg none)",
    ),
    ("shorter than 131,072 entries", published(length=8 * 1024), entry(), "fewer than the 131072"),
    (
        "list of another purpose",
        published(purpose="suspension"),
        entry(),
        "Status list is not a revocation list",
    ),
    (
        "list credential expired",
        published(change=expired_list),
        entry(),
        "Status list credential has expired",
    ),
    (
        "not a BitstringStatusListCredential",
        published(change=not_a_status_list_credential),
        entry(),
        "is not a BitstringStatusListCredential",
    ),
    (
        "subject not a BitstringStatusList",
        published(change=subject_not_a_status_list),
        entry(),
        "subject is not a BitstringStatusList",
    ),
    (
        "list id is another list's",
        published(change=another_lists_id),
        entry(),
        "is for another list",
    ),
    (
        "encodedList without multibase prefix",
        published(change=drop_multibase_prefix),
        entry(),
        "no u prefix",
    ),
    (
        "encodedList ZLIB, not GZIP",
        published(change=zlib_instead_of_gzip),
        entry(),
        "not GZIP-compressed data",
    ),
    (
        "encodedList inflating past 16 MiB",
        published(change=gzip_bomb),
        entry(),
        "larger than 16777216 bytes",
    ),
    ("index past the end", published(), entry(200_000), "outside the status list"),
    (
        "index as a number",
        published(),
        entry(statusListIndex=1),
        "not a base-10 integer in a string",
    ),
    (
        "StatusList2021Entry pointing at a Bitstring Status List",
        published(),
        entry(type="StatusList2021Entry"),
        "not a JSON document",
    ),
    ("another entry type", published(), entry(type="RevocationList2020Status"), "is neither"),
    (
        "message purpose",
        published(purpose="message"),
        entry(purpose="message"),
        "neither revocation nor suspension",
    ),
]


@pytest.mark.parametrize(
    ("setup", "make_entry", "reason"),
    [row[1:] for row in NO_STATEMENT],
    ids=[row[0] for row in NO_STATEMENT],
)
def test_no_statement_can_be_made(
    issuer: Issuer, parties: Parties, fetcher: Fetcher, setup, make_entry, reason: str
):
    setup(issuer, parties)

    with pytest.raises(StatusError) as refused:
        issuer.check(make_entry(issuer.url), fetcher)

    assert reason in refused.value.reason
