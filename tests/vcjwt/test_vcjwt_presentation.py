"""verify_vp_jwt against presentations and credentials made by did-jwt-vc / did-jwt (and jose for
what those refuse to make): both data models, both holder DID methods, and one row per way a
presentation must be refused."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from vcjwt_support import (
    AUD,
    CLAIMS,
    CREDENTIAL_TYPE,
    NONCE,
    V1,
    Parties,
    Party,
    credential_v1,
    credential_v2,
    flip_signature_byte,
    iso,
    issue,
    jose,
    present,
)

from app.trust.fetch import Fetcher
from app.vcjwt import VcJwtError, verify_vp_jwt


def verify(token: object, *, nonce: str = NONCE, audience: str = AUD):
    # No fetch is allowed anywhere here: every DID these tests use resolves without one.
    return verify_vp_jwt(
        token,
        audience=audience,
        nonce=nonce,
        now=datetime.now(UTC),
        fetcher=Fetcher(timeout=1.0),
        anchors=(),
    )


def issue_and_present(model: str, issuer: Party, holder: Party, **properties) -> str:
    build = credential_v1 if model == "1.1" else credential_v2
    return present(model, holder, issue(model, issuer, build(holder.did, **properties)))


def b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


# --------------------------------------------------------------------------- what verifies


@pytest.mark.parametrize("model", ["1.1", "2.0"])
def test_a_presentation_of_the_holders_own_credential_verifies(parties: Parties, model: str):
    verified = verify(issue_and_present(model, parties.issuer, parties.holder))

    assert verified.issuer.identifier == parties.issuer.did
    assert verified.issuer.method == "did:jwk"
    assert verified.holder == parties.holder.did
    assert verified.types == ("VerifiableCredential", CREDENTIAL_TYPE)
    assert verified.subject == CLAIMS  # credentialSubject without its id
    assert verified.status is None
    assert verified.data_model == model


@pytest.mark.parametrize("model", ["1.1", "2.0"])
def test_a_did_key_holder_signing_with_ed25519_verifies(parties: Parties, model: str):
    verified = verify(issue_and_present(model, parties.issuer, parties.ed_holder))

    assert verified.holder == parties.ed_holder.did
    assert verified.holder.startswith("did:key:z6Mk")


def test_the_holders_own_key_may_travel_in_the_header(parties: Parties):
    holder = parties.holder.with_header(jwk=parties.holder.public_jwk)
    token = present("2.0", holder, issue("2.0", parties.issuer, credential_v2(holder.did)))

    assert verify(token).holder == parties.holder.did


def test_a_did_key_holder_on_p256_verifies(parties: Parties):
    holder = parties.other_holder.as_did(parties.other_holder.key["did_key"])

    assert verify(issue_and_present("1.1", parties.issuer, holder)).holder.startswith("did:key:zDn")


def test_vcdm_1_1_subject_is_read_from_sub_as_did_jwt_vc_writes_it(parties: Parties):
    # did-jwt-vc moves credentialSubject.id to the sub claim (VCDM 1.1 §6.3.1 JWT encoding).
    token = issue("1.1", parties.issuer, credential_v1(parties.holder.did))
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert payload["sub"] == parties.holder.did
    assert "id" not in payload["vc"]["credentialSubject"]

    assert verify(present("1.1", parties.holder, token)).holder == parties.holder.did


def test_the_credential_status_is_returned_for_the_status_checker(parties: Parties):
    entry = {
        "type": "BitstringStatusListEntry",
        "statusPurpose": "revocation",
        "statusListIndex": "7",
        "statusListCredential": "https://issuer.example/status/1",
    }
    token = issue_and_present("2.0", parties.issuer, parties.holder, credentialStatus=entry)

    assert verify(token).status == entry


def test_an_audience_list_naming_this_verifier_is_accepted(parties: Parties):
    credential = issue("2.0", parties.issuer, credential_v2(parties.holder.did))
    token = present("2.0", parties.holder, credential, aud=["https://other.example", AUD])

    assert verify(token).holder == parties.holder.did


# --------------------------------------------------------------------------- what is refused


def vp_payload_v1(holder: str, credentials: list) -> dict:
    vp = {"@context": [V1], "type": ["VerifiablePresentation"], "verifiableCredential": credentials}
    return {"iss": holder, "nonce": NONCE, "aud": AUD, "vp": vp}


def vc_payload_v1(issuer: str, subject: str) -> dict:
    now = int(datetime.now(UTC).timestamp())
    vc = {"@context": [V1], "type": ["VerifiableCredential"], "credentialSubject": CLAIMS}
    return {"iss": issuer, "sub": subject, "nbf": now - 60, "vc": vc}


def unsigned_vp(p: Parties) -> str:
    return jose(
        "none", vp_payload_v1(p.holder.did, [issue("1.1", p.issuer, credential_v1(p.holder.did))])
    )


def hmac_vp(p: Parties) -> str:
    return jose(
        "HS256", vp_payload_v1(p.holder.did, [issue("1.1", p.issuer, credential_v1(p.holder.did))])
    )


def unsigned_vc(p: Parties) -> str:
    return present("1.1", p.holder, jose("none", vc_payload_v1(p.issuer.did, p.holder.did)))


def hmac_vc(p: Parties) -> str:
    return present("1.1", p.holder, jose("HS256", vc_payload_v1(p.issuer.did, p.holder.did)))


def other_nonce(p: Parties) -> str:
    credential = issue("1.1", p.issuer, credential_v1(p.holder.did))
    return present("1.1", p.holder, credential, nonce="another-request")


def other_audience(p: Parties) -> str:
    credential = issue("2.0", p.issuer, credential_v2(p.holder.did))
    return present("2.0", p.holder, credential, aud="redirect_uri:https://attacker.example/cb")


def flipped_vp_signature(p: Parties) -> str:
    return flip_signature_byte(issue_and_present("1.1", p.issuer, p.holder))


def flipped_vc_signature(p: Parties) -> str:
    credential = issue("2.0", p.issuer, credential_v2(p.holder.did))
    return present("2.0", p.holder, flip_signature_byte(credential))


def someone_elses_credential(p: Parties) -> str:
    credential = issue("1.1", p.issuer, credential_v1(p.other_holder.did))
    return present("1.1", p.holder, credential)


def someone_elses_credential_v2(p: Parties) -> str:
    credential = issue("2.0", p.issuer, credential_v2(p.other_holder.did))
    return present("2.0", p.holder, credential)


def holder_key_not_the_dids(p: Parties) -> str:
    # Signed with other_holder's key while claiming to be holder.
    impostor = p.other_holder.as_did(p.holder.did)
    return present("1.1", impostor, issue("1.1", p.issuer, credential_v1(p.holder.did)))


def kid_naming_another_key(p: Parties) -> str:
    holder = p.holder.with_header(kid=f"{p.holder.did}#1")
    return present("1.1", holder, issue("1.1", p.issuer, credential_v1(p.holder.did)))


def embedded_jwk_of_another_key(p: Parties) -> str:
    holder = p.holder.with_header(jwk=p.other_holder.public_jwk)
    return present("1.1", holder, issue("1.1", p.issuer, credential_v1(p.holder.did)))


def holder_not_a_did(p: Parties) -> str:
    holder = p.holder.as_did("https://holder.example")
    return present("1.1", holder, issue("1.1", p.issuer, credential_v1(holder.did)))


def issuer_key_not_the_dids(p: Parties) -> str:
    forger = p.other_issuer.as_did(p.issuer.did)
    return issue_and_present("2.0", forger, p.holder)


def credential_for_another_audience(p: Parties) -> str:
    return issue_and_present("2.0", p.issuer, p.holder, aud="https://other-verifier.example")


def credential_about_nobody(p: Parties) -> str:
    credential = credential_v2(p.holder.did, credentialSubject=CLAIMS)
    return present("2.0", p.holder, issue("2.0", p.issuer, credential))


def past(days: int = 2) -> str:
    return iso(datetime.now(UTC) - timedelta(days=days))


def future(days: int = 2) -> str:
    return iso(datetime.now(UTC) + timedelta(days=days))


def expired_v1(p: Parties) -> str:
    return issue_and_present(
        "1.1", p.issuer, p.holder, issuanceDate=past(10), expirationDate=past()
    )


def expired_v2(p: Parties) -> str:
    return issue_and_present("2.0", p.issuer, p.holder, validUntil=past())


def not_yet_valid_v1(p: Parties) -> str:
    return issue_and_present("1.1", p.issuer, p.holder, issuanceDate=future())


def not_yet_valid_v2(p: Parties) -> str:
    return issue_and_present("2.0", p.issuer, p.holder, validFrom=future())


def unresolvable_issuer(p: Parties) -> str:
    return issue_and_present("1.1", p.issuer.as_did("did:example:issuer"), p.holder)


def embedded_json_credential(p: Parties) -> str:
    raw = credential_v2(p.holder.did, issuer=p.issuer.did)
    return present("2.0", p.holder, "", verifiableCredential=[raw])


def two_credentials(p: Parties) -> str:
    credential = issue("1.1", p.issuer, credential_v1(p.holder.did))
    return present("1.1", p.holder, "", verifiableCredential=[credential, credential])


def plain_jwt_string_in_a_v2_presentation(p: Parties) -> str:
    credential = issue("2.0", p.issuer, credential_v2(p.holder.did))
    return present("2.0", p.holder, "", verifiableCredential=[credential])


def credential_as_presentation(p: Parties) -> str:
    return issue("1.1", p.issuer, credential_v1(p.holder.did))


def not_a_jwt(_: Parties) -> str:
    return "this is not a presentation"


def huge(_: Parties) -> str:
    return f"{b64({'alg': 'ES256'})}.{b64({'x': 'a' * 70_000})}.c2ln"


def deep_json(_: Parties) -> str:
    return f"{b64({'alg': 'ES256'})}.{b64({'vp': json.loads('[' * 100 + ']' * 100)})}.c2ln"


def deeper_than_python(_: Parties) -> str:
    return f"{b64({'alg': 'ES256'})}.{base64.urlsafe_b64encode(b'[' * 5000).rstrip(b'=').decode()}.c2ln"


def not_a_string(_: Parties) -> object:
    return {"vp": "not even text"}


REFUSED: list[tuple[str, Callable[[Parties], object], str]] = [
    ("alg none on the presentation", unsigned_vp, "Presentation is unsigned (alg none)"),
    ("HMAC on the presentation", hmac_vp, "Presentation uses an HMAC algorithm"),
    ("alg none on the credential", unsigned_vc, "Credential is unsigned (alg none)"),
    ("HMAC on the credential", hmac_vc, "Credential uses an HMAC algorithm"),
    ("nonce of another request", other_nonce, "Presentation nonce does not match the request"),
    ("audience of another verifier", other_audience, "Presentation audience does not match"),
    (
        "presentation signature flipped",
        flipped_vp_signature,
        "Presentation signature does not verify",
    ),
    ("credential signature flipped", flipped_vc_signature, "Credential signature does not verify"),
    (
        "someone else's credential (1.1)",
        someone_elses_credential,
        "Credential subject is not the holder",
    ),
    (
        "someone else's credential (2.0)",
        someone_elses_credential_v2,
        "Credential subject is not the holder",
    ),
    (
        "credential for another audience",
        credential_for_another_audience,
        "Credential is meant for another audience",
    ),
    ("credential without a subject id", credential_about_nobody, "Credential is not bound"),
    ("kid naming another key", kid_naming_another_key, "kid) does not name the holder's key"),
    ("embedded jwk of another key", embedded_jwk_of_another_key, "jwk is not the holder's key"),
    ("holder not a DID", holder_not_a_did, "is not a did:jwk, did:key or did:prism DID"),
    (
        "holder DID with another key",
        holder_key_not_the_dids,
        "Presentation signature does not verify",
    ),
    (
        "issuer DID with another key",
        issuer_key_not_the_dids,
        "Credential signature does not verify",
    ),
    ("expired (1.1 expirationDate)", expired_v1, "Credential has expired"),
    ("expired (2.0 validUntil)", expired_v2, "Credential has expired"),
    ("not yet valid (1.1 issuanceDate)", not_yet_valid_v1, "Credential is not valid yet"),
    ("not yet valid (2.0 validFrom)", not_yet_valid_v2, "Credential is not valid yet"),
    ("unresolvable issuer", unresolvable_issuer, "Issuer did:example:issuer is neither"),
    ("embedded JSON credential", embedded_json_credential, "without a proof of its own"),
    ("two credentials", two_credentials, "Presentation must hold exactly one credential"),
    (
        "JWT string in a 2.0 presentation",
        plain_jwt_string_in_a_v2_presentation,
        "is not an EnvelopedVerifiableCredential",
    ),
    (
        "a credential instead of a presentation",
        credential_as_presentation,
        "Presentation is a credential",
    ),
    ("not a JWT", not_a_jwt, "Presentation is not a compact JWS"),
    ("larger than 64 KiB", huge, "Presentation is larger than 65536 bytes"),
    ("JSON nested 100 deep", deep_json, "nested deeper than 64 levels"),
    (
        "JSON nested deeper than Python",
        deeper_than_python,
        "Presentation payload is not valid JSON",
    ),
    ("not text", not_a_string, "Presentation is not a JWT"),
]


@pytest.mark.parametrize(
    ("make", "reason"), [(make, reason) for _, make, reason in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_a_presentation_is_refused_with_a_reason(parties: Parties, make, reason: str):
    token = make(parties)

    with pytest.raises(VcJwtError) as refused:
        verify(token)

    assert reason in refused.value.reason


def test_the_issuer_is_named_when_the_credential_is_refused_after_reading_it(parties: Parties):
    with pytest.raises(VcJwtError) as refused:
        verify(expired_v2(parties))

    assert refused.value.issuer == parties.issuer.did


def test_an_empty_nonce_or_audience_never_matches(parties: Parties):
    token = issue_and_present("1.1", parties.issuer, parties.holder)

    with pytest.raises(VcJwtError, match="without an audience and a nonce"):
        verify(token, nonce="")
    with pytest.raises(VcJwtError, match="without an audience and a nonce"):
        verify(token, audience="")
