"""An mdoc through the one decision every format goes through: trust by the pinned IACA root,
claims by attribute name, and the MSO's status read from a Token Status List in CWT form served
by a real local server (fail-closed), kept for the later re-check."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from mdoc_support import MDL, MDL_NS, MdocJob, make_iaca, pem_cert, present, resign_mso
from trust.test_statuslist_cwt import list_claims, publish, sign1
from trust.trust_support import LocalServer

from app.oid4vp.formats import MSO_MDOC, CredentialType
from app.presentations.decide import Context, Rules, decide
from app.presentations.reasons import Family
from app.statuslist import check_kept
from app.trust.fetch import Fetcher, TTLCache

CLIENT_ID = "redirect_uri:https://verity.test/oid4vp/responses/1"
RESPONSE_URI = "https://verity.test/oid4vp/responses/1"
NONCE = "nonce-of-the-request"
MDL_TYPE = CredentialType(MSO_MDOC, doctype=MDL, namespace=MDL_NS)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0, cache=TTLCache())


def context(fetcher: Fetcher) -> Context:
    return Context(
        audience=CLIENT_ID,
        nonce=NONCE,
        now=datetime.now(UTC),
        fetcher=fetcher,
        client_id=CLIENT_ID,
        response_uri=RESPONSE_URI,
    )


def rules(iaca, conditions=()) -> Rules:
    return Rules(MDL_TYPE, ["given_name"], list(conditions), [pem_cert(iaca.root)])


def presented(iaca, status: dict | None = None) -> str:
    entry = present(MdocJob(iaca, client_id=CLIENT_ID, nonce=NONCE, response_uri=RESPONSE_URI))
    if status is None:
        return entry
    return resign_mso(entry, iaca, lambda mso: mso.update(status=status))


def test_an_mdoc_of_the_pinned_authority_is_verified_with_its_claims_by_name(fetcher):
    iaca = make_iaca()
    adult = {"name": "age_over_18", "operator": "EQUAL", "value": True, "type": "BOOLEAN"}
    decision = decide(presented(iaca), rules(iaca, [adult]), context(fetcher))
    assert (decision.verified, decision.reason) == (True, None)
    assert decision.claims == {"given_name": "Erika"}


def test_an_mdoc_of_another_authority_is_refused(fetcher):
    decision = decide(presented(make_iaca()), rules(make_iaca()), context(fetcher))
    assert (decision.verified, decision.reason) == (
        False,
        "Certificate chain does not lead to a trusted anchor",
    )
    assert decision.family == Family.UNTRUSTED_ISSUER, "the person reads: an issuer not accepted"


@pytest.mark.parametrize(
    ("statuses", "reason"),
    [([0, 0], None), ([0, 1], "Credential has been revoked by its issuer")],
    ids=["valid", "revoked"],
)
def test_the_status_list_cwt_decides(server, fetcher, statuses, reason):
    iaca = make_iaca()
    uri = server.url("/lists/1")
    publish(server, sign1(list_claims(uri, statuses), iaca.signer_key))
    entry = presented(iaca, {"status_list": {"idx": 1, "uri": uri}})

    decision = decide(entry, rules(iaca), context(fetcher))

    assert (decision.verified, decision.reason) == (reason is None, reason)
    if reason is None:
        kept = decision.status_reference
        assert kept is not None and kept["kind"] == "cwt"
        later = check_kept(
            kept, fetcher=Fetcher(allow_private=True), anchors=[], now=datetime.now(UTC)
        )
        assert later.valid


def test_a_status_list_that_cannot_be_read_fails_closed(server, fetcher):
    iaca = make_iaca()
    entry = presented(iaca, {"status_list": {"idx": 1, "uri": server.url("/lists/gone")}})

    decision = decide(entry, rules(iaca), context(fetcher))

    assert not decision.verified
    assert decision.reason.startswith("Credential status could not be checked: ")
