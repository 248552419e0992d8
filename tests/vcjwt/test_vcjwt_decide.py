"""The decision on jwt_vc_json presentations: the VC-JWT reader behind the one judging every
format shares (trust, type, status, conditions, requested claims)."""

from __future__ import annotations

from datetime import UTC, datetime

from trust.trust_support import LocalServer
from vcjwt_support import (
    AUD,
    CREDENTIAL_TYPE,
    NONCE,
    Parties,
    Party,
    credential_v1,
    credential_v2,
    iso,
    issue,
    present,
    run_node,
    status_entry,
)

from app.oid4vp.formats import JWT_VC_JSON, CredentialType
from app.presentations.decide import Context, Rules, decide
from app.presentations.reasons import Family
from app.trust.fetch import Fetcher

IDENTITY = CredentialType(JWT_VC_JSON, types=(CREDENTIAL_TYPE,))


def rules(**overrides) -> Rules:
    values = {
        "credential": IDENTITY,
        "requested_claims": ["given_name", "address.country"],
        "conditions": [{"name": "address.country", "operator": "IN", "value": ["DE", "FR"]}],
        "trusted_issuers": [],
    }
    return Rules(**{**values, **overrides})


def context(fetcher: Fetcher | None = None) -> Context:
    return Context(
        audience=AUD,
        nonce=NONCE,
        now=datetime.now(UTC),
        fetcher=fetcher or Fetcher(timeout=1.0),
        client_id=AUD,
    )


def presentation(p: Parties, issuer: Party | None = None, model: str = "2.0", **properties) -> str:
    build = credential_v1 if model == "1.1" else credential_v2
    credential = issue(model, issuer or p.issuer, build(p.holder.did, **properties))
    return present(model, p.holder, credential)


def test_a_valid_presentation_keeps_only_the_requested_claims(parties: Parties):
    decision = decide(presentation(parties, model="1.1"), rules(), context())

    assert (decision.verified, decision.reason) == (True, None)
    assert decision.issuer == parties.issuer.did
    assert decision.claims == {"given_name": "Erika", "address": {"country": "DE"}}


def test_an_issuer_a_pinned_verification_does_not_list_is_untrusted(parties: Parties):
    decision = decide(presentation(parties), rules(trusted_issuers=["did:jwk:other"]), context())

    assert (
        decision.reason
        == f"Credential issuer {parties.issuer.did} is not trusted by this verification"
    )


def test_an_unresolvable_issuer_is_named_as_untrusted_when_issuers_are_pinned(parties: Parties):
    forger = parties.issuer.as_did("did:example:issuer")
    decision = decide(
        presentation(parties, forger), rules(trusted_issuers=[parties.issuer.did]), context()
    )

    assert decision.family is Family.UNTRUSTED_ISSUER
    assert decision.issuer == "did:example:issuer"


def test_a_credential_of_other_types_is_the_wrong_type(parties: Parties):
    decision = decide(
        presentation(parties),
        rules(credential=CredentialType(JWT_VC_JSON, types=("Diploma",))),
        context(),
    )

    assert decision.reason == (
        f"Credential type VerifiableCredential, {CREDENTIAL_TYPE} is not the type this "
        "verification asks for"
    )


def test_an_unmet_condition_says_which(parties: Parties):
    unmet = [{"name": "address.country", "operator": "IN", "value": ["FR"]}]
    decision = decide(presentation(parties), rules(conditions=unmet), context())

    assert decision.family is Family.CONDITION


def test_someone_elses_credential_fails(parties: Parties):
    credential = issue("2.0", parties.issuer, credential_v2(parties.other_holder.did))
    decision = decide(present("2.0", parties.holder, credential), rules(), context())

    assert decision.reason == "Credential subject is not the holder who signed the presentation"
    assert decision.issuer == parties.issuer.did


def test_an_expired_credential_reads_as_expired(parties: Parties):
    decision = decide(
        presentation(parties, validUntil=iso(datetime(2020, 1, 1, tzinfo=UTC))), rules(), context()
    )

    assert decision.family is Family.EXPIRED


def test_status_is_checked_and_the_reference_kept(parties: Parties, server: LocalServer):
    url = server.url("/status/1")
    for path, revoked in (("/status/1", ()), ("/status/2", (4,))):
        made = run_node(
            {
                "kind": "status_list",
                "model": "2.0",
                "id": server.url(path),
                "purpose": "revocation",
                "length": 131_072,
                "set": list(revoked),
            }
        )[0]["credential"]
        server.add(path, issue("2.0", parties.issuer, made))
    fetcher = Fetcher(allow_private=True, timeout=2.0)

    valid = decide(
        presentation(parties, credentialStatus=status_entry(url, 4)), rules(), context(fetcher)
    )
    revoked = decide(
        presentation(parties, credentialStatus=status_entry(server.url("/status/2"), 4)),
        rules(),
        context(fetcher),
    )

    assert valid.verified and valid.status_reference["kind"] == "bitstring"
    assert valid.status_reference["entries"][0]["statusListCredential"] == url
    assert (revoked.verified, revoked.family) == (False, Family.REVOKED)


def test_an_unreachable_status_list_fails_closed(parties: Parties, server: LocalServer):
    entry = status_entry(server.url("/status/missing"), 4)
    decision = decide(
        presentation(parties, credentialStatus=entry), rules(), context(Fetcher(allow_private=True))
    )

    assert decision.family is Family.STATUS_UNCHECKED
