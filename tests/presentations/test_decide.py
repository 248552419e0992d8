"""``decide()`` on its own, one table row per reason family and per operator.

Credentials come from implementations we did not write (PyPI sd-jwt in process; npm
@sd-jwt/sd-jwt-vc where a status claim is needed), status lists from a real local server.
Conditions are stored the way a save stores them (``check_conditions`` on the values as a
client sends them, text included), so each row also pins that typed values are compared by
type. Each row names the reason an integrator reads and the family the person's page words.
"""

from __future__ import annotations

import re
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from trust.trust_support import Issued, LocalServer, ec_key, make_cert, sign, x5c
from wallets import PID_VCT, Issuer, WalletRequest, node_presentation, python_presentation

from app.oid4vp.formats import CredentialType
from app.presentations.decide import Context, Rules, decide
from app.presentations.reasons import FOR_PERSON, NO_ISSUER_PINNED, Family, for_person
from app.sdjwt.encoding import b64url_encode
from app.trust.fetch import Fetcher
from app.verifications.conditions import check_conditions

AUDIENCE = "redirect_uri:https://verity.test/oid4vp/responses/r-1"
NONCE = "nonce-of-the-request"
REQUEST = WalletRequest(
    request_id="r-1", client_id=AUDIENCE, nonce=NONCE, state="s", response_uri="", claims={}
)
MEMBER_VCT = "https://verity.test/vct/member"

# A schema with one attribute of each type, and the claims a member's credential carries.
SCHEMA = [
    {"name": "points", "type": "NUMBER"},
    {"name": "score", "type": "NUMBER"},
    {"name": "level", "type": "NUMBER"},
    {"name": "member", "type": "BOOLEAN"},
    {"name": "since", "type": "DATETIME"},
    {"name": "renewed", "type": "DATETIME"},
    {"name": "birthdate", "type": "DATETIME"},
    {"name": "homepage", "type": "URL"},
    {"name": "email", "type": "EMAIL"},
    {"name": "given_name", "type": "TEXT"},
    {"name": "nickname", "type": "TEXT"},
    {"name": "nationalities", "type": "TEXT"},
    {"name": "address", "type": "TEXT"},
]
MEMBER = {
    "points": 17,
    "score": "17",  # a number the issuer wrote as text
    "level": "gold",  # not a number at all, though the schema says NUMBER
    "member": True,
    "since": "2000-01-31",
    "renewed": "2020-05-01T10:00:00Z",
    "birthdate": "1984-01-26",
    "homepage": "https://Example.com/members/17",
    "email": "Erika@Example.com",
    "given_name": "Erika",
    "nationalities": ["DE", "FR"],
    "address": {"zip": "10115"},
}
ALL = {name: True for name in MEMBER if name != "address"} | {"address": {"zip": True}}


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0)


def context(fetcher: Fetcher, later: timedelta = timedelta(0)) -> Context:
    """The request's context, deciding ``later`` than now (the clock is read here, when the
    decision is made, never when the table is built)."""
    return Context(audience=AUDIENCE, nonce=NONCE, now=datetime.now(UTC) + later, fetcher=fetcher)


def rules(*conditions: dict[str, Any], claims=(), pins=(), vct=MEMBER_VCT) -> Rules:
    stored = check_conditions(list(conditions), SCHEMA)
    requested = list(claims) + [c["name"] for c in stored if c["name"] not in claims]
    return Rules(CredentialType(vct=vct), requested, stored, list(pins))


def member_presentation(issuer: Issuer, **kwargs: Any) -> str:
    return python_presentation(REQUEST, issuer, claims=MEMBER, reveal=ALL, vct=MEMBER_VCT, **kwargs)


def c(name: str, operator: str, value: Any = None) -> dict[str, Any]:
    return {"name": name, "operator": operator, "value": value}


# -- conditions: every operator, with values as clients send them ----------------------------


@dataclass(frozen=True)
class Row:
    condition: dict[str, Any]
    reason: str | None  # None: verified

    @property
    def id(self) -> str:
        value = self.condition["value"]
        return f"{self.condition['name']}-{self.condition['operator']}-{value!r}"


CONDITION_ROWS = [
    # NUMBER: text and numbers are numbers; "17" against 17, never by text.
    Row(c("points", "EQUAL", "17"), None),
    Row(c("points", "EQUAL", "17.0"), None),
    Row(c("points", "EQUAL", 18), "Attribute points does not satisfy EQUAL 18"),
    Row(c("points", "NOT", "17"), "Attribute points does not satisfy NOT 17"),
    Row(c("points", "NOT", "18"), None),
    Row(c("score", "BIGGER", "9"), None),  # by text "17" < "9"; as numbers 17 > 9
    Row(c("score", "EQUAL", 17), None),
    Row(c("points", "SMALLER", "9"), "Attribute points does not satisfy SMALLER 9"),
    Row(c("points", "SMALLER", "100"), None),
    Row(c("points", "IN", ["16", "17"]), None),
    Row(c("points", "IN", ["1", 2]), "Attribute points does not satisfy IN [1, 2]"),
    # A claim that cannot be read as the schema's type never matches, not even NOT.
    Row(c("level", "EQUAL", "1"), "Attribute level does not satisfy EQUAL 1"),
    Row(c("level", "NOT", "1"), "Attribute level does not satisfy NOT 1"),
    # BOOLEAN
    Row(c("member", "EQUAL", "true"), None),
    Row(c("member", "EQUAL", "TRUE"), None),
    Row(c("member", "EQUAL", "false"), "Attribute member does not satisfy EQUAL false"),
    Row(c("member", "NOT", False), None),
    # DATETIME: dates as dates; a full-date against a date-time compares calendar days.
    Row(c("since", "EQUAL", "2000-01-31"), None),
    Row(c("since", "EQUAL", "2000-01-31T23:30:00Z"), None),
    Row(c("since", "BIGGER", "2000-01-30"), None),
    Row(
        c("since", "SMALLER", "2000-01-31"),
        'Attribute since does not satisfy SMALLER "2000-01-31"',
    ),
    Row(
        c("renewed", "BIGGER", "2020-05-01"),
        'Attribute renewed does not satisfy BIGGER "2020-05-01"',
    ),
    Row(c("renewed", "BIGGER", "2020-05-01T11:00:00+02:00"), None),  # 09:00Z, an hour before
    Row(
        c("renewed", "SMALLER", "2020-05-01T11:00:00+02:00"),
        'Attribute renewed does not satisfy SMALLER "2020-05-01T11:00:00+02:00"',
    ),
    Row(c("birthdate", "AGE_AT_LEAST", "18"), None),
    Row(c("birthdate", "AGE_AT_LEAST", 18), None),
    Row(
        c("birthdate", "AGE_AT_LEAST", "120"),
        "Attribute birthdate does not satisfy AGE_AT_LEAST 120",
    ),
    # URL (scheme and host ignore case) and EMAIL (ignores case)
    Row(c("homepage", "EQUAL", "HTTPS://EXAMPLE.COM/members/17"), None),
    Row(
        c("homepage", "EQUAL", "https://example.com/members/18"),
        'Attribute homepage does not satisfy EQUAL "https://example.com/members/18"',
    ),
    Row(c("email", "EQUAL", "erika@example.com"), None),
    # TEXT, a list claim (one element suffices; NOT needs none), a path below an attribute
    Row(c("given_name", "EQUAL", "Erika"), None),
    Row(c("given_name", "NOT", "Erika"), 'Attribute given_name does not satisfy NOT "Erika"'),
    Row(c("given_name", "IN", ["Max", "Erika"]), None),
    Row(c("nationalities", "EQUAL", "FR"), None),
    Row(c("nationalities", "IN", ["NL", "DE"]), None),
    Row(c("nationalities", "NOT", "FR"), 'Attribute nationalities does not satisfy NOT "FR"'),
    Row(c("address.zip", "BIGGER", "10000"), None),
    Row(c("address.zip", "SMALLER", 10000), "Attribute address.zip does not satisfy SMALLER 10000"),
    # EXISTS
    Row(c("given_name", "EXISTS"), None),
    Row(c("nickname", "EXISTS"), "Attribute nickname is missing, so EXISTS cannot be satisfied"),
    Row(
        c("nickname", "EQUAL", "Eri"), "Attribute nickname is missing, so EQUAL cannot be satisfied"
    ),
]


@pytest.mark.parametrize("row", CONDITION_ROWS, ids=lambda row: row.id)
def test_conditions_compare_claims_by_the_schema_type(issuer, fetcher, row):
    decision = decide(member_presentation(issuer), rules(row.condition), context(fetcher))
    assert (decision.verified, decision.reason) == (row.reason is None, row.reason)
    assert decision.family == (None if row.reason is None else Family.CONDITION)


def test_every_operator_has_a_row_that_passes_and_one_that_fails():
    from app.verifications.conditions import OPERATORS

    passing = {row.condition["operator"] for row in CONDITION_ROWS if row.reason is None}
    failing = {row.condition["operator"] for row in CONDITION_ROWS if row.reason is not None}
    assert passing == failing == set(OPERATORS)


# -- every other reason family ------------------------------------------------------------------


def kb_less(presentation: str) -> str:
    """The presentation without its key binding JWT (what follows the last ``~``)."""
    return presentation[: presentation.rindex("~") + 1]


def issuer_jwt_only(presentation: str) -> str:
    return presentation.split("~", 1)[0]


FAMILY_ROWS: list[tuple[str, Any, Any, Any, str, Family]] = [
    # (id, presentation(issuer), rules(issuer), context changes, reason (format), family)
    (
        "untrusted-issuer",
        lambda i: member_presentation(i),
        lambda i: rules(pins=["did:jwk:someone-else"]),
        {},
        "Credential issuer {did} is not trusted by this verification",
        Family.UNTRUSTED_ISSUER,
    ),
    (
        "no-issuer-pinned",
        lambda i: member_presentation(i, iss=None),
        lambda i: rules(pins=[i.did]),
        {},
        NO_ISSUER_PINNED,
        Family.NO_ISSUER,
    ),
    (
        "no-issuer-pinned-and-wrong-nonce-and-type",
        lambda i: python_presentation(REQUEST, i, iss=None, nonce="another", vct="urn:x"),
        lambda i: rules(pins=[i.did]),
        {},
        NO_ISSUER_PINNED,
        Family.NO_ISSUER,
    ),
    (
        "no-issuer-pinned-and-no-key-binding",
        lambda i: kb_less(member_presentation(i, iss=None)),
        lambda i: rules(pins=[i.did]),
        {},
        NO_ISSUER_PINNED,
        Family.NO_ISSUER,
    ),
    (
        "no-issuer-pinned-and-not-even-an-sd-jwt",
        lambda i: issuer_jwt_only(member_presentation(i, iss=None)),
        lambda i: rules(pins=[i.did]),
        {},
        NO_ISSUER_PINNED,
        Family.NO_ISSUER,
    ),
    (
        "no-issuer-unpinned-is-not-the-pinned-sentence",
        lambda i: member_presentation(i, iss=None),
        lambda i: rules(),
        {},
        None,  # whatever the trust layer says; checked below not to be the pinned sentence
        Family.INVALID,
    ),
    (
        "wrong-type",
        lambda i: python_presentation(REQUEST, i, vct="urn:example:library-card"),
        lambda i: rules(),
        {},
        "Credential type urn:example:library-card is not the type this verification asks for",
        Family.WRONG_TYPE,
    ),
    (
        "expired",
        lambda i: member_presentation(i, exp_in=-120),
        lambda i: rules(),
        {},
        "Credential has expired",
        Family.EXPIRED,
    ),
    (
        "answered-too-late",
        lambda i: member_presentation(i),
        lambda i: rules(),
        {"later": timedelta(minutes=10)},
        "Key binding was signed too long ago",
        Family.LATE,
    ),
    (
        "key-binding-for-another-request",
        lambda i: member_presentation(i, nonce="another"),
        lambda i: rules(),
        {},
        "Key binding nonce does not match the request",
        Family.INVALID,
    ),
    (
        "forged-signature",
        lambda i: python_presentation(REQUEST, Issuer(), iss=i.did, vct=MEMBER_VCT),
        lambda i: rules(),
        {},
        "Credential signature does not verify",
        Family.INVALID,
    ),
    (
        "requested-claim-withheld",
        lambda i: python_presentation(REQUEST, i, claims=MEMBER, reveal={}, vct=MEMBER_VCT),
        lambda i: rules(claims=["given_name"]),
        {},
        "Requested claim given_name was not disclosed",
        Family.MISSING_CLAIM,
    ),
]


@pytest.mark.parametrize(
    ("make", "rules_for", "changes", "reason", "family"),
    [row[1:] for row in FAMILY_ROWS],
    ids=[row[0] for row in FAMILY_ROWS],
)
def test_each_reason_family(issuer, fetcher, make, rules_for, changes, reason, family):
    decision = decide(make(issuer), rules_for(issuer), context(fetcher, **changes))
    assert not decision.verified
    if reason is None:
        assert decision.reason and decision.reason != NO_ISSUER_PINNED
    else:
        assert decision.reason == reason.format(did=issuer.did)
    assert decision.family == family


def test_a_valid_presentation_verifies_with_the_requested_claims_only(issuer, fetcher):
    decision = decide(
        member_presentation(issuer),
        rules(c("points", "BIGGER", "9"), claims=["given_name"], pins=[issuer.did]),
        context(fetcher),
    )
    assert (decision.verified, decision.reason, decision.family) == (True, None, None)
    assert decision.issuer == issuer.did
    assert decision.claims == {"given_name": "Erika", "points": 17}


# -- a PEM certificate in trusted_issuers anchors x5c chains, whatever the format ---------------

X5C_ISSUER = "https://issuer.verity.test/member"


def x5c_presentation(root: Issued) -> str:
    """An SD-JWT VC (PyPI sd-jwt) whose ``x5c`` is a leaf for the issuer's key under ``root``,
    the leaf naming the credential's ``iss``; the root itself travels in no chain."""
    holder = Issuer(key=ec_key())
    leaf = make_cert("Member issuer", issuer=root, key=holder.key, uris=[X5C_ISSUER])
    return member_presentation(holder, iss=X5C_ISSUER, x5c=x5c(leaf))


def test_an_sd_jwt_vc_whose_x5c_chains_to_a_pinned_pem_verifies(fetcher):
    root = make_cert("Member Root CA", ca=True)
    decision = decide(
        x5c_presentation(root),
        rules(c("points", "BIGGER", "9"), pins=[root.pem]),
        context(fetcher),
    )
    assert (decision.verified, decision.reason) == (True, None)
    assert decision.issuer == X5C_ISSUER


def test_an_sd_jwt_vc_whose_x5c_chains_to_another_root_fails(fetcher):
    root = make_cert("Member Root CA", ca=True)
    pinned = make_cert("Another Root CA", ca=True)
    decision = decide(
        x5c_presentation(root),
        rules(c("points", "BIGGER", "9"), pins=[pinned.pem]),
        context(fetcher),
    )
    assert decision.verified is False
    assert decision.reason == (
        f"Credential issuer {X5C_ISSUER} is not trusted by this verification"
    )


# -- revocation, through a status list served by a real local server ---------------------------


@pytest.fixture
def server():
    local = LocalServer()
    yield local
    local.stop()


def status_list(server: LocalServer, issuer: Issuer, statuses: list[int], bits: int) -> str:
    """A Token Status List (statuslist+jwt) signed by the credential's own issuer."""
    packed = bytearray((len(statuses) * bits + 7) // 8)
    for index, status in enumerate(statuses):
        bit = index * bits
        packed[bit // 8] |= status << (bit % 8)
    uri = server.url("/lists/1")
    now = int(time.time())
    token = sign(
        {
            "iss": issuer.did,
            "sub": uri,
            "iat": now,
            "exp": now + 3600,
            "ttl": 300,
            "status_list": {"bits": bits, "lst": b64url_encode(zlib.compress(bytes(packed)))},
        },
        issuer.key,
        typ="statuslist+jwt",
    )
    server.add("/lists/1", token, headers={"Content-Type": "application/statuslist+jwt"})
    return uri


@pytest.mark.parametrize(
    ("statuses", "bits", "reason", "family"),
    [
        ([0, 0, 0, 0], 1, None, None),
        ([0, 0, 1, 0], 1, "Credential has been revoked by its issuer", Family.REVOKED),
        ([0, 0, 2, 0], 2, "Credential is suspended by its issuer", Family.SUSPENDED),
    ],
    ids=["valid", "revoked", "suspended"],
)
def test_the_status_list_entry_decides(issuer, fetcher, server, statuses, bits, reason, family):
    uri = status_list(server, issuer, statuses, bits)
    presentation = node_presentation(
        REQUEST, issuer, status={"status_list": {"idx": 2, "uri": uri}}
    )
    decision = decide(presentation, rules(vct=PID_VCT), context(fetcher))
    assert (decision.verified, decision.reason, decision.family) == (
        reason is None,
        reason,
        family,
    )


def test_a_status_list_that_cannot_be_fetched_fails_closed(issuer, fetcher, server):
    presentation = node_presentation(
        REQUEST, issuer, status={"status_list": {"idx": 2, "uri": server.url("/lists/gone")}}
    )
    decision = decide(presentation, rules(vct=PID_VCT), context(fetcher))
    assert not decision.verified
    assert decision.reason.startswith("Credential status could not be checked: ")
    assert decision.family == Family.STATUS_UNCHECKED


# -- what the person reads --------------------------------------------------------------------


def test_every_family_has_plain_words_without_protocol_terms():
    assert set(FOR_PERSON) == set(Family)
    terms = {"nonce", "jwt", "sd-jwt", "vct", "iss", "dcql", "openid4vp", "cnf", "kb"}
    phrases = ("key binding", "status list", "signature")
    for family, text in FOR_PERSON.items():
        words = set(re.findall(r"[a-z0-9+-]+", text.lower()))
        assert not words & terms, family
        assert not any(phrase in text.lower() for phrase in phrases), family


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        (
            "Credential has been revoked by its issuer",
            "This credential has been revoked by its issuer.",
        ),
        (
            "Key binding was signed too long ago",
            "Your wallet's answer came too late, please try again.",
        ),
        ("Attribute points does not satisfy BIGGER 9", FOR_PERSON[Family.CONDITION]),
        ("Key binding nonce does not match the request", FOR_PERSON[Family.INVALID]),
        ("Something no one wrote yet", FOR_PERSON[Family.INVALID]),
        (None, None),
    ],
)
def test_the_person_reads_the_family_not_the_reason(reason, text):
    assert for_person(reason) == text
