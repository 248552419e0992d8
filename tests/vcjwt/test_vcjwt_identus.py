"""Presentations in the shape Hyperledger Identus wallets (SDK 7.0.0) send and credentials in
the shape its cloud agent issues: ES256K JWTs signed by did:prism DIDs.

The JWTs are signed here by joserfc (an independent JOSE implementation); the DIDs are made by
``app.didcomm.prism.make``, whose long forms are checked against the SDK's in tests/didcomm.
The shapes (DIDCOMM.md §1.6, §3): VP header ``{alg: ES256K, typ: JWT, kid: <holder long
form>#authentication-0}``, claims ``{iss: holder, aud: <domain>, nonce: <challenge>, iat, vp:
{@context: [.../2018/presentations/v1], type, verifiableCredential: [<VC JWT>]}}`` without
exp; VC claims ``{iss, sub, nbf, exp?, vc: {@context, type, credentialSubject: {..., id},
credentialStatus}}`` signed by the issuer's issuing (assertionMethod) key.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey
from trust.trust_support import LocalServer, did_jwk

from app.api.wallet import trust_context
from app.didcomm import prism
from app.oid4vp.formats import JWT_VC_JSON, CredentialType
from app.presentations.decide import Context, Rules, decide
from app.sdjwt.encoding import b64url_encode
from app.trust import PrismResolution
from app.trust.fetch import Fetcher
from app.vcjwt import VcJwtError, verify_vp_jwt

V1 = "https://www.w3.org/2018/credentials/v1"
STATUS_CONTEXT = "https://w3id.org/vc/status-list/2021/v1"
PRESENTATIONS_V1 = "https://www.w3.org/2018/presentations/v1"
DOMAIN = "verity.example"
CHALLENGE = '{"type":"verification","nonce":"3f9a1c2e"}'
SUBJECT = {"type": "verification", "first_name": "Ada", "country": "GB"}
STATUS = {
    "id": "https://agent.example/credential-status/4a1b#17",
    "type": "StatusList2021Entry",
    "statusPurpose": "Revocation",
    "statusListIndex": 17,
    "statusListCredential": "https://agent.example/credential-status/4a1b",
}
HOLDER_KEYS = {"master-0": prism.MASTER, "authentication-0": prism.AUTHENTICATION}
# Shin's organization DIDs (the cloud agent's templates): auth-1 and issue-1.
ISSUER_KEYS = {"master-0": prism.MASTER, "auth-1": prism.AUTHENTICATION, "issue-1": prism.ISSUING}


# --------------------------------------------------------------------------- signing


def jose_key(private: Any) -> ECKey | OKPKey:
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return (
        OKPKey.import_key(pem)
        if isinstance(private, ed25519.Ed25519PrivateKey)
        else (ECKey.import_key(pem))
    )


def sign(claims: dict[str, Any], private: Any, kid: str | None, alg: str = "ES256K") -> str:
    header = {"alg": alg, "typ": "JWT", **({"kid": kid} if kid else {})}
    return jwt.encode(header, claims, jose_key(private), algorithms=[alg])


def vc_claims(issuer: str, holder: str, **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    document = {
        "@context": [V1, STATUS_CONTEXT],
        "type": ["VerifiableCredential"],
        "credentialSubject": {**SUBJECT, "id": holder},
        "credentialStatus": STATUS,
        **extra.pop("vc", {}),
    }
    return {
        "iss": issuer,
        "sub": holder,
        "nbf": now - 60,
        "exp": now + 3600,
        "vc": document,
        **extra,
    }


def issue(issuer: prism.NewPrismDid, holder: str, *, iss: str | None = None, **options: Any):
    kid = options.pop("kid", f"{issuer.did}#issue-1")
    return sign(vc_claims(iss or issuer.did, holder, **options), issuer.keys["issue-1"], kid)


def vp_claims(holder: str, credential: str, **claims: Any) -> dict[str, Any]:
    return {
        "iss": holder,
        "aud": DOMAIN,
        "nonce": CHALLENGE,
        "iat": int(time.time()),
        "vp": {
            "@context": [PRESENTATIONS_V1],
            "type": ["VerifiablePresentation"],
            "verifiableCredential": [credential],
        },
        **claims,
    }


def present(
    holder: prism.NewPrismDid,
    credential: str,
    *,
    key_id: str = "authentication-0",
    kid: str | None = None,
    **claims: Any,
) -> str:
    payload = vp_claims(holder.did, credential, **claims)
    return sign(payload, holder.keys[key_id], kid or f"{holder.did}#{key_id}")


def verify(token: str, *, nonce: str = CHALLENGE, prism_resolution=None, fetcher=None):
    return verify_vp_jwt(
        token,
        audience=DOMAIN,
        nonce=nonce,
        now=datetime.now(UTC),
        fetcher=fetcher or Fetcher(timeout=1.0),
        anchors=(),
        prism=prism_resolution,
    )


def refusal(token: str, **options: Any) -> str:
    with pytest.raises(VcJwtError) as refused:
        verify(token, **options)
    return refused.value.reason


def short_document(did: str) -> dict[str, Any]:
    """The document a PRISM node gives for the published DID: the long form's keys under the
    short form's id."""
    parsed = prism.parse(did)
    text = json.dumps(parsed.document()).replace(did, parsed.canonical)
    document = json.loads(text)
    document.pop("alsoKnownAs")
    return document


@pytest.fixture(scope="module")
def holder() -> prism.NewPrismDid:
    return prism.make(HOLDER_KEYS)


@pytest.fixture(scope="module")
def issuer() -> prism.NewPrismDid:
    return prism.make(ISSUER_KEYS)


def short(did: str) -> str:
    return prism.parse(did).canonical


# --------------------------------------------------------------------------- what verifies


def test_an_identus_presentation_of_a_cloud_agent_credential_verifies(holder, issuer):
    verified = verify(present(holder, issue(issuer, holder.did)))

    assert verified.holder == holder.did
    assert verified.issuer.identifier == short(issuer.did)  # named by its short form
    assert verified.issuer.method == "did:prism"
    assert verified.types == ("VerifiableCredential",)
    assert verified.subject == SUBJECT
    assert verified.status == STATUS  # returned as carried, for a status checker
    assert verified.data_model == "1.1"


@pytest.mark.parametrize(
    "vc_kid",
    [None, "#issue-1", "issue-1", "{short}#issue-1", "{long}#issue-1"],
    ids=["no kid", "relative", "bare", "short form", "long form"],
)
@pytest.mark.parametrize(
    "vp_kid", ["{long}#authentication-0", "#authentication-0", "{short}#authentication-0"]
)
def test_key_ids_in_every_form_name_the_same_key(holder, issuer, vc_kid, vp_kid):
    def fill(kid: str | None, did: str) -> str | None:
        return kid and kid.format(long=did, short=short(did))

    credential = issue(issuer, holder.did, kid=fill(vc_kid, issuer.did))
    assert verify(present(holder, credential, kid=fill(vp_kid, holder.did))).holder == holder.did


def test_the_credentials_context_is_accepted_for_the_presentation_too(holder, issuer):
    credential = issue(issuer, holder.did)
    token = present(
        holder,
        credential,
        vp={
            "@context": [V1],
            "type": ["VerifiablePresentation"],
            "verifiableCredential": [credential],
        },
    )
    assert verify(token).holder == holder.did


def test_an_ed25519_authentication_key_of_a_did_prism_holder_verifies(issuer):
    # Identus holders use secp256k1; a did:prism may list Ed25519 keys as well.
    ed = ed25519.Ed25519PrivateKey.generate()
    raw = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    master = ec.generate_private_key(ec.SECP256K1())
    numbers = master.public_key().public_numbers()
    did = prism.CreateDid(
        [
            prism.PublicKey(
                "master-0",
                prism.MASTER,
                prism.SECP256K1,
                x=numbers.x.to_bytes(32, "big"),
                y=numbers.y.to_bytes(32, "big"),
            ),
            prism.PublicKey("authentication-0", prism.AUTHENTICATION, "Ed25519", compressed=raw),
        ]
    ).long_form()
    payload = vp_claims(did, issue(issuer, did))

    token = sign(payload, ed, f"{did}#authentication-0", alg="Ed25519")
    assert verify(token).holder == did
    # An ES256K header cannot name that key (RFC 8725 §3.1: the algorithm fits the key).
    forged = sign(payload, master, f"{did}#authentication-0")
    assert refusal(forged) == "Presentation key does not fit its signing algorithm"


def test_es256k_with_a_p256_holder_key_is_refused(issuer):
    p256 = ec.generate_private_key(ec.SECP256R1())
    holder = did_jwk(p256)
    header = b64json({"alg": "ES256K", "typ": "JWT", "kid": f"{holder}#0"})
    body = b64json(vp_claims(holder, issue(issuer, holder)))
    r, s = decode_dss_signature(p256.sign(f"{header}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
    signature = b64url_encode(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    assert refusal(f"{header}.{body}.{signature}") == (
        "Presentation key does not fit its signing algorithm"
    )


def b64json(value: dict[str, Any]) -> str:
    return b64url_encode(json.dumps(value).encode())


# --------------------------------------------------------------------------- what is refused


def test_a_wrong_nonce_is_refused(holder, issuer):
    token = present(holder, issue(issuer, holder.did))
    assert refusal(token, nonce='{"type":"verification","nonce":"other"}') == (
        "Presentation nonce does not match the request"
    )


def test_a_wrong_audience_is_refused(holder, issuer):
    token = present(holder, issue(issuer, holder.did), aud="shinid.com")
    assert refusal(token) == "Presentation audience does not match this verifier"


def test_a_presentation_by_a_did_that_is_not_the_credentials_subject_is_refused(holder, issuer):
    other = prism.make(HOLDER_KEYS)
    token = present(other, issue(issuer, holder.did))
    assert refusal(token) == "Credential subject is not the holder who signed the presentation"


def test_a_presentation_claiming_the_holder_but_signed_by_another_key_is_refused(holder, issuer):
    other = prism.make(HOLDER_KEYS)
    forged = prism.NewPrismDid(holder.did, other.keys)
    token = present(forged, issue(issuer, holder.did))
    assert refusal(token) == "Presentation signature does not verify"


def test_a_tampered_credential_is_refused(holder, issuer):
    head, payload, signature = issue(issuer, holder.did).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["vc"]["credentialSubject"]["country"] = "FR"
    changed = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert refusal(present(holder, f"{head}.{changed}.{signature}")) == (
        "Credential signature does not verify"
    )


@pytest.mark.parametrize(
    "dates",
    [
        {"exp": int(time.time()) - 3600},
        {"vc": {"expirationDate": "2020-01-01T00:00:00Z"}, "exp": None},
    ],
    ids=["exp", "expirationDate"],
)
def test_an_expired_credential_is_refused(holder, issuer, dates):
    claims = vc_claims(issuer.did, holder.did, **dates)
    claims = {name: value for name, value in claims.items() if value is not None}
    credential = sign(claims, issuer.keys["issue-1"], f"{issuer.did}#issue-1")
    assert refusal(present(holder, credential)) == "Credential has expired"


def test_a_kid_naming_a_key_that_is_not_for_authentication_is_refused(issuer):
    holder = prism.make({**HOLDER_KEYS, "issuing-0": prism.ISSUING})
    token = present(holder, issue(issuer, holder.did), key_id="issuing-0")
    assert refusal(token) == (
        f"Presentation holder key: Key #issuing-0 of {short(holder.did)} is not listed for "
        "authentication"
    )


def test_a_kid_naming_the_master_key_is_refused(holder, issuer):
    token = present(holder, issue(issuer, holder.did), key_id="master-0")
    assert (
        refusal(token) == f"Presentation holder key: DID {short(holder.did)} has no key #master-0"
    )


def test_a_did_prism_holder_must_name_its_key(holder, issuer):
    payload = vp_claims(holder.did, issue(issuer, holder.did))
    token = sign(payload, holder.keys["authentication-0"], None)
    assert "names no key (kid)" in refusal(token)


def test_a_credential_signed_with_the_issuers_authentication_key_is_refused(holder, issuer):
    credential = sign(
        vc_claims(issuer.did, holder.did), issuer.keys["auth-1"], f"{issuer.did}#auth-1"
    )
    assert refusal(present(holder, credential)) == (
        f"Key #auth-1 of {short(issuer.did)} is not listed for assertionMethod"
    )


def test_a_short_form_holder_is_refused(holder, issuer):
    canonical = short(holder.did)
    token = present(prism.NewPrismDid(canonical, holder.keys), issue(issuer, canonical))
    assert "short-form did:prism" in refusal(token)


def test_a_long_form_whose_hash_does_not_match_is_refused(holder, issuer):
    operation = holder.did.rsplit(":", 1)[1]
    wrong = f"did:prism:{'0' * 64}:{operation}"
    token = present(prism.NewPrismDid(wrong, holder.keys), issue(issuer, wrong))
    assert "hash is not the SHA-256 of its operation" in refusal(token)


# --------------------------------------------------------------------------- short-form issuers


def test_a_short_form_issuer_without_pin_or_resolver_is_refused_saying_how_to_pin(holder, issuer):
    credential = issue(
        issuer, holder.did, iss=short(issuer.did), kid=f"{short(issuer.did)}#issue-1"
    )
    reason = refusal(present(holder, credential))
    assert reason.startswith(f"Issuer {short(issuer.did)} is a short-form did:prism")
    assert "PINNED_DID_DOCUMENTS_FILE" in reason and "DID_RESOLVER_URL" in reason


def test_a_pinned_short_form_issuer_verifies(holder, issuer):
    canonical = short(issuer.did)
    credential = issue(issuer, holder.did, iss=canonical, kid=f"{canonical}#issue-1")
    pinned = PrismResolution({canonical: short_document(issuer.did)})

    verified = verify(present(holder, credential), prism_resolution=pinned)
    assert (verified.issuer.identifier, verified.issuer.method) == (canonical, "did:prism")


def test_a_pin_wins_over_the_keys_a_long_form_carries(holder, issuer):
    # The DID was published and its issuing key rotated: the pin holds the current key.
    rotated = prism.make(ISSUER_KEYS)
    document = json.loads(
        json.dumps(short_document(rotated.did)).replace(short(rotated.did), short(issuer.did))
    )
    pinned = PrismResolution({short(issuer.did): document})
    old = present(holder, issue(issuer, holder.did))
    assert refusal(old, prism_resolution=pinned) == "Credential signature does not verify"

    new_key = prism.NewPrismDid(issuer.did, rotated.keys)
    assert verify(present(holder, issue(new_key, holder.did)), prism_resolution=pinned)


def test_a_short_form_issuer_resolves_through_the_configured_resolver(holder, issuer):
    canonical = short(issuer.did)
    server = LocalServer()
    try:
        server.add(
            f"/1.0/identifiers/{canonical}",
            {"didDocument": short_document(issuer.did), "didDocumentMetadata": {}},
        )
        resolver = PrismResolution(resolver_url=server.url("/"))
        credential = issue(issuer, holder.did, iss=canonical, kid=f"{canonical}#issue-1")
        token = present(holder, credential)
        # The resolver is loopback: only a development fetcher may reach it.
        development = Fetcher(allow_private=True, timeout=2.0)
        verified = verify(token, prism_resolution=resolver, fetcher=development)
        assert verified.issuer.identifier == canonical
        assert server.hits[f"/1.0/identifiers/{canonical}"] == 1

        refused = refusal(token, prism_resolution=resolver, fetcher=Fetcher(timeout=1.0))
        assert refused.startswith(f"Could not resolve {canonical}: ")
    finally:
        server.stop()


# --------------------------------------------------------------------------- the decision


IDENTUS = CredentialType(JWT_VC_JSON, types=("VerifiableCredential",))


def rules(trusted_issuers: list[str]) -> Rules:
    return Rules(IDENTUS, ["first_name"], [], trusted_issuers)


def context(prism_resolution: PrismResolution | None = None) -> Context:
    return Context(
        audience=DOMAIN,
        nonce=CHALLENGE,
        now=datetime.now(UTC),
        fetcher=Fetcher(timeout=1.0),
        prism=prism_resolution,
    )


def without_status(issuer: prism.NewPrismDid, holder: str, **options: Any) -> str:
    # StatusList2021 (the cloud agent's status lists) is not read by this verifier yet.
    return issue(issuer, holder, vc={"credentialStatus": None}, **options)


@pytest.mark.parametrize("pin", ["short", "long"])
def test_a_long_form_issuer_matches_its_pinned_short_or_long_form(holder, issuer, pin):
    token = present(holder, without_status(issuer, holder.did))
    entry = short(issuer.did) if pin == "short" else issuer.did
    decision = decide(token, rules([entry]), context())

    assert (decision.verified, decision.reason) == (True, None)
    assert decision.issuer == short(issuer.did)
    assert decision.claims == {"first_name": "Ada"}


def test_an_issuer_the_verification_does_not_pin_is_untrusted(holder, issuer):
    token = present(holder, without_status(issuer, holder.did))
    other = short(prism.make().did)
    decision = decide(token, rules([other]), context())

    assert decision.reason == (
        f"Credential issuer {short(issuer.did)} is not trusted by this verification"
    )


def test_an_unresolvable_short_form_issuer_pinned_by_the_verification_says_how_to_pin(
    holder, issuer
):
    canonical = short(issuer.did)
    credential = without_status(issuer, holder.did, iss=canonical, kid=f"{canonical}#issue-1")
    decision = decide(present(holder, credential), rules([canonical]), context())

    assert not decision.verified
    assert "PINNED_DID_DOCUMENTS_FILE" in decision.reason
    assert decision.issuer == canonical

    pinned = PrismResolution({canonical: short_document(issuer.did)})
    assert decide(present(holder, credential), rules([canonical]), context(pinned)).verified


def test_an_unresolvable_long_form_issuer_not_pinned_is_named_untrusted_by_its_short_form(holder):
    wrong = f"did:prism:{'1' * 64}:AAAA"
    forger = prism.NewPrismDid(wrong, {"issue-1": ec.generate_private_key(ec.SECP256K1())})
    token = present(holder, without_status(forger, holder.did))
    decision = decide(token, rules([short(prism.make().did)]), context())

    assert decision.reason == (
        f"Credential issuer did:prism:{'1' * 64} is not trusted by this verification"
    )
    assert decision.issuer == f"did:prism:{'1' * 64}"


def test_the_cloud_agents_status_list_2021_entry_is_not_read_yet(holder, issuer):
    token = present(holder, issue(issuer, holder.did))

    decision = decide(token, rules([]), context())
    assert decision.reason is not None
    assert decision.reason.startswith("Credential status could not be checked: ")
    fail_open = replace(context(), status_fail_open=True)
    assert decide(token, rules([]), fail_open).verified


# --------------------------------------------------------------------------- the deployment


def test_the_deployments_pins_and_resolver_reach_every_decision(make_app, issuer):
    canonical = short(issuer.did)
    app = make_app(
        PINNED_DID_DOCUMENTS=json.dumps([short_document(issuer.did)]),
        DID_RESOLVER_URL="https://resolver.example",
    )
    with app.test_request_context("/"):
        resolution = trust_context(DOMAIN, CHALLENGE).prism

    assert resolution is not None
    assert resolution.resolver_url == "https://resolver.example"
    assert set(resolution.pinned) == {canonical}


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"PINNED_DID_DOCUMENTS": "[{}]"}, "entry 0 is not a DID document"),
        ({"DID_RESOLVER_URL": "http://resolver.example"}, "must be an https:// URL"),
        ({"DID_RESOLVER_URL": "resolver.example"}, "must be an https:// URL"),
    ],
)
def test_a_pin_file_or_resolver_that_cannot_work_stops_the_start(make_app, config, reason):
    with pytest.raises(RuntimeError, match=reason):
        make_app(**config)


def test_a_plain_http_resolver_is_a_development_setting(make_app):
    app = make_app(DID_RESOLVER_URL="http://127.0.0.1:9", TRUST_ALLOW_PRIVATE=True)
    assert app.extensions["prism"].resolver_url == "http://127.0.0.1:9"
