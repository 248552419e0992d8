"""Our verdicts against openvc-core's, on one corpus of presentations.

Every credential is issued by a ``did:jwk`` issuer, so both verifiers find the issuer's key on
their own and offline: ours through ``app.trust.resolve_issuer_key`` as the presentation flow
does, openvc through its default resolver. The corpus holds valid presentations from two
implementations we did not write (npm ``@sd-jwt/sd-jwt-vc`` and PyPI ``sd-jwt``) and from the
test forge, and one presentation per attack the forge can express.

For each case our verdict is asserted first (so agreement never hides two wrong answers), then
openvc's must be the same, except for the cases in ``KNOWN_DISAGREEMENTS``, where openvc's
verdict is asserted to differ, with the reason ours stands.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from unittest import mock

import pytest
from jwcrypto import jwk as jwcrypto_jwk
from openvc.errors import OpenvcError
from openvc.verify import VerificationPolicy, verify_credential
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer
from sdjwt_forge import (
    AUDIENCE,
    NONCE,
    Forge,
    b64,
    b64json,
    digest,
    disclose,
    generate,
    private_jwk,
    public_jwk,
    raw_signature,
    sd_jwt_of,
    sign,
    tamper,
)
from wallet.node_wallet import issue_and_present

from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation
from app.trust import Fetcher, TrustError, resolve_issuer_key

# openvc checks the issuer JWT's exp, nbf and iat against the wall clock whatever the policy
# says (its key binding checks use the pinned ``now``, as ours do). So the corpus is dated at
# import, credential dates lie a day away, and the verdicts hold for a day after collection.
NOW = int(time.time())
HOUR = 3600
DAY = 24 * HOUR
VCT = "urn:example:pid:1"
ACCEPT, REFUSE = "accept", "refuse"


def did_jwk(jwk: dict[str, Any]) -> str:
    return "did:jwk:" + b64json(jwk)


@dataclass
class DidForge(Forge):
    """The forge with a did:jwk issuer, and header members set to None left out."""

    issuer_alg: str = "ES256"
    holder_alg: str = "ES256"

    @property
    def did(self) -> str:
        return did_jwk(public_jwk(self.issuer_key))

    def payload(self, **changes: Any) -> dict[str, Any]:
        return super().payload(**{"iss": self.did, "exp": self.now + DAY, **changes})

    def issuer_jwt(self, payload: dict[str, Any] | None = None, **header: Any) -> str:
        full = {"alg": self.issuer_alg, "typ": "dc+sd-jwt", **header}
        return sign(_present_members(full), payload or self.payload(), self.issuer_key)

    def key_binding(self, sd_jwt: str, key: Any = None, header=None, **claims: Any) -> str:
        full = {"alg": self.holder_alg, "typ": "kb+jwt", **(header or {})}
        payload = {"aud": AUDIENCE, "nonce": NONCE, "iat": self.now, "sd_hash": digest(sd_jwt)}
        payload = _present_members({**payload, **claims})
        return sign(_present_members(full), payload, self.holder_key if key is None else key)


def _present_members(members: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in members.items() if value is not None}


def forge(issuer_alg: str = "ES256", holder_alg: str = "ES256") -> DidForge:
    return DidForge(
        issuer_key=generate(issuer_alg),
        holder_key=generate(holder_alg),
        now=NOW,
        issuer_alg=issuer_alg,
        holder_alg=holder_alg,
    )


def disclosed(claim: str, value: Any, **payload_changes: Any) -> str:
    """A presentation that discloses ``claim`` selectively, next to the usual disclosures."""
    f = forge()
    extra = disclose(claim, value)
    base = f.payload(**payload_changes)
    payload = {**base, "_sd": sorted([*base["_sd"], digest(extra)])}
    return f.present(f.issuer_jwt(payload), [*f.shown(), extra])


def kb_over(f: DidForge, presented: list[str], covered: list[str]) -> str:
    """Present ``presented`` disclosures with a key binding made over ``covered`` ones."""
    issuer_jwt = f.issuer_jwt()
    return sd_jwt_of(issuer_jwt, presented) + f.key_binding(sd_jwt_of(issuer_jwt, covered))


def signed_raw(header: dict[str, Any], payload_json: str, key: Any) -> str:
    """A JWS over payload bytes written by hand (for JSON no dict can hold)."""
    signing_input = f"{b64json(header)}.{b64(payload_json.encode())}"
    signature = raw_signature(header["alg"], key, signing_input.encode())
    return f"{signing_input}.{b64(signature)}"


def flip_unused_bits(compact: str) -> str:
    """The same signature bytes, spelled with the last character's unused bits set."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return compact[:-1] + alphabet[alphabet.index(compact[-1]) ^ 1]


# Implementations we did not write


def node_wallet(issuer_alg: str, holder_alg: str) -> str:
    issuer_key, holder_key = generate(issuer_alg), generate(holder_alg)
    job = {
        "issuer_jwk": private_jwk(issuer_key),
        "issuer_alg": issuer_alg,
        "holder_jwk": private_jwk(holder_key),
        "holder_alg": holder_alg,
        "iss": did_jwk(public_jwk(issuer_key)),
        "vct": VCT,
        "iat": NOW - 60,
        "exp": NOW + DAY,
        "claims": {
            "given_name": "Erika",
            "family_name": "Mustermann",
            "address": {"locality": "Köln", "country": "DE"},
            "nationalities": ["DE", "FR"],
        },
        "frame": {
            "_sd": ["given_name", "family_name", "address"],
            "_sd_decoy": 2,
            "address": {"_sd": ["country"]},
            "nationalities": {"_sd": [0, 1]},
        },
        "present": {"given_name": True, "address": {"country": True}, "nationalities": {"1": True}},
        "aud": AUDIENCE,
        "nonce": NONCE,
        "kb_iat": NOW,
    }
    return issue_and_present(job)["presentation"]


def python_sd_jwt() -> str:
    issuer_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
    holder_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
    claims = {
        "iss": did_jwk(issuer_key.export_public(as_dict=True)),
        "vct": VCT,
        "iat": NOW - 60,
        "exp": NOW + DAY,
        SDObj("given_name"): "Erika",
        SDObj("address"): {"locality": "Köln", SDObj("country"): "DE"},
        "nationalities": ["DE", SDObj("FR")],
    }
    issuer = SDJWTIssuer(
        claims,
        issuer_key,
        holder_key,
        sign_alg="ES256",
        add_decoy_claims=True,
        extra_header_parameters={"typ": "dc+sd-jwt"},
    )
    holder = SDJWTHolder(issuer.sd_jwt_issuance)
    shown = {"given_name": True, "address": {"country": True}, "nationalities": [None, True]}
    # The library dates its key binding JWT by the wall clock; pin it to the corpus's NOW, or
    # the verdict would depend on how long after collection the corpus happens to be built.
    with mock.patch("sd_jwt.holder.time", return_value=NOW):
        holder.create_presentation(shown, NONCE, AUDIENCE, holder_key, "ES256")
    return holder.sd_jwt_presentation


# The corpus: name -> (how to build it, our verdict)


def _valid(f: DidForge | None = None, **header: Any) -> str:
    f = f or forge()
    return f.present(f.issuer_jwt(**header))


def _every_disclosure() -> str:
    f = forge()
    return f.present(shown=list(f.disclosures.values()))


def _kid_naming_the_did() -> str:
    f = forge()
    return f.present(f.issuer_jwt(kid=f.did + "#0"))


def _issuer_signature_changed() -> str:
    f = forge()
    return f.present(tamper(f.issuer_jwt()))


def _fully_specified_ed25519() -> str:
    f = forge("EdDSA")
    return f.present(f.issuer_jwt(alg="Ed25519"))


def _hmac_issuer() -> str:
    # The classic confusion: the "secret" is the issuer's public key, which anyone has.
    f = forge()
    secret = json.dumps(public_jwk(f.issuer_key)).encode()
    return f.present(sign({"alg": "HS256", "typ": "dc+sd-jwt"}, f.payload(), secret))


def _issuer_signed_by_another_key() -> str:
    f = forge()
    return f.present(sign({"alg": "ES256", "typ": "dc+sd-jwt"}, f.payload(), generate()))


def _did_jwk_with_private_key() -> str:
    f = forge()
    return f.present(f.issuer_jwt(f.payload(iss=did_jwk(private_jwk(f.issuer_key)))))


def _holder_key_with_private_part() -> str:
    f = forge()
    return f.present(f.issuer_jwt(f.payload(cnf={"jwk": private_jwk(f.holder_key)})))


def _duplicate_digest() -> str:
    f = forge()
    given = digest(f.disclosures["given_name"])
    return f.present(f.issuer_jwt(f.payload(_sd=[given, given, digest(f.disclosures["address"])])))


def _duplicate_exp_member() -> str:
    # An expired exp followed by a later one: a parser that keeps the last value sees a valid
    # credential, one that keeps the first an expired one.
    f = forge()
    text = json.dumps(f.payload(exp=NOW - DAY))[:-1] + f', "exp": {NOW + DAY}}}'
    return f.present(signed_raw({"alg": "ES256", "typ": "dc+sd-jwt"}, text, f.issuer_key))


def _non_canonical_issuer_signature() -> str:
    f = forge()
    return f.present(flip_unused_bits(f.issuer_jwt()))


def _empty_disclosure() -> str:
    # "~~" in the middle; the key binding hashes the string without the empty part.
    f = forge()
    issuer_jwt = f.issuer_jwt()
    covered = sd_jwt_of(issuer_jwt, f.shown())
    presented = sd_jwt_of(issuer_jwt, [*f.shown()[:1], "", *f.shown()[1:]])
    return presented + f.key_binding(covered)


def _added_disclosure() -> str:
    f = forge()
    return kb_over(f, [*f.shown(), f.disclosures["family_name"]], f.shown())


def _removed_disclosure() -> str:
    f = forge()
    return kb_over(f, f.shown()[1:], f.shown())


def _reordered_disclosures() -> str:
    f = forge()
    return kb_over(f, f.shown()[::-1], f.shown())


def _unreferenced_disclosure() -> str:
    f = forge()
    return f.present(shown=[*f.shown(), disclose("nickname", "Eri")])


def _disclosure_shown_twice() -> str:
    f = forge()
    return f.present(shown=[*f.shown(), f.disclosures["given_name"]])


def _disclosure_over_a_plain_claim() -> str:
    f = forge()
    return f.present(f.issuer_jwt(f.payload(given_name="Plain")))


def _without_key_binding() -> str:
    f = forge()
    return sd_jwt_of(f.issuer_jwt(), f.shown())


def _kb(**kb: Any) -> Callable[[], str]:
    def build() -> str:
        f = forge()
        return f.present(**kb)

    return build


def _credential(**payload_changes: Any) -> Callable[[], str]:
    def build() -> str:
        f = forge()
        return f.present(f.issuer_jwt(f.payload(**payload_changes)))

    return build


def _header(**header: Any) -> Callable[[], str]:
    return lambda: _valid(**header)


CORPUS: dict[str, tuple[Callable[[], str], str]] = {
    # Valid presentations
    "node wallet ES256 / ES256": (lambda: node_wallet("ES256", "ES256"), ACCEPT),
    "node wallet EdDSA / ES384": (lambda: node_wallet("EdDSA", "ES384"), ACCEPT),
    "node wallet ES512 / EdDSA": (lambda: node_wallet("ES512", "EdDSA"), ACCEPT),
    "python sd-jwt ES256 / ES256": (python_sd_jwt, ACCEPT),
    "forge ES256 / ES256": (_valid, ACCEPT),
    "forge ES384 / EdDSA": (lambda: _valid(forge("ES384", "EdDSA")), ACCEPT),
    "forge Ed25519 (RFC 9864) / ES256": (_fully_specified_ed25519, ACCEPT),
    "forge RS256 issuer": (lambda: _valid(forge("RS256")), ACCEPT),
    "forge PS256 issuer": (lambda: _valid(forge("PS256")), ACCEPT),
    "forge without disclosures": (lambda: forge().present(shown=[]), ACCEPT),
    "forge with every disclosure": (_every_disclosure, ACCEPT),
    "forge kid #0": (_header(kid="#0"), ACCEPT),
    "forge kid did#0": (_kid_naming_the_did, ACCEPT),
    "issuer typ application/dc+sd-jwt": (_header(typ="application/dc+sd-jwt"), ACCEPT),
    "key binding typ application/kb+jwt": (_kb(header={"typ": "application/kb+jwt"}), ACCEPT),
    "credential aud naming this verifier": (_credential(aud=[AUDIENCE]), ACCEPT),
    # The issuer-signed JWT
    "issuer alg none": (_header(alg="none"), REFUSE),
    "issuer HS256 keyed with the public key": (_hmac_issuer, REFUSE),
    "issuer signature changed": (_issuer_signature_changed, REFUSE),
    "issuer signed by another key": (_issuer_signed_by_another_key, REFUSE),
    "issuer alg does not fit the key": (_header(alg="ES384"), REFUSE),
    "issuer crit header": (_header(crit=["urn:example:ext"]), REFUSE),
    "issuer kid names another did:jwk key": (_header(kid="#1"), REFUSE),
    "issuer did:jwk holds a private key": (_did_jwk_with_private_key, REFUSE),
    "issuer typ JWT": (_header(typ="JWT"), REFUSE),
    "issuer typ vc+sd-jwt": (_header(typ="vc+sd-jwt"), REFUSE),
    "issuer typ missing": (_header(typ=None), REFUSE),
    "issuer signature non-canonical base64url": (_non_canonical_issuer_signature, REFUSE),
    "issuer payload repeats exp": (_duplicate_exp_member, REFUSE),
    # Claims of the credential
    "credential expired": (_credential(exp=NOW - DAY), REFUSE),
    "credential not yet valid": (_credential(nbf=NOW + DAY), REFUSE),
    "credential issued in the future": (_credential(iat=NOW + DAY), REFUSE),
    "credential aud naming another verifier": (
        _credential(aud="x509_san_dns:other.example"),
        REFUSE,
    ),
    "credential without cnf": (_credential(cnf=None), REFUSE),
    "credential without vct": (_credential(vct=None), REFUSE),
    "credential _sd_alg sha-1": (_credential(_sd_alg="sha-1"), REFUSE),
    "holder key carries its private part": (_holder_key_with_private_part, REFUSE),
    # Disclosures
    "disclosed iss": (lambda: disclosed("iss", "did:jwk:x", iss=None), REFUSE),
    "disclosed cnf": (lambda: disclosed("cnf", {"jwk": public_jwk(generate())}, cnf=None), REFUSE),
    "disclosed exp": (lambda: disclosed("exp", NOW + DAY, exp=None), REFUSE),
    "disclosed vct": (lambda: disclosed("vct", VCT, vct=None), REFUSE),
    "disclosed status": (
        lambda: disclosed("status", {"status_list": {"idx": 0, "uri": "https://x/1"}}),
        REFUSE,
    ),
    "duplicate digest": (_duplicate_digest, REFUSE),
    "unreferenced disclosure": (_unreferenced_disclosure, REFUSE),
    "disclosure presented twice": (_disclosure_shown_twice, REFUSE),
    "disclosure over a plain claim": (_disclosure_over_a_plain_claim, REFUSE),
    "empty disclosure": (_empty_disclosure, REFUSE),
    # Key binding
    "no key binding": (_without_key_binding, REFUSE),
    "no key binding and no tilde": (lambda: forge().issuer_jwt(), REFUSE),
    "key binding alg none": (_kb(header={"alg": "none"}), REFUSE),
    "key binding HS256": (_kb(header={"alg": "HS256"}, key=b"secret"), REFUSE),
    "key binding signature changed": (lambda: tamper(_valid()), REFUSE),
    "key binding by another key": (lambda: forge().present(key=generate()), REFUSE),
    "key binding wrong nonce": (_kb(nonce="another-nonce"), REFUSE),
    "key binding wrong aud": (_kb(aud="redirect_uri:https://other.example/cb"), REFUSE),
    "key binding aud as an array": (_kb(aud=[AUDIENCE]), REFUSE),
    "key binding without nonce": (_kb(nonce=None), REFUSE),
    "key binding stale iat": (_kb(iat=NOW - HOUR), REFUSE),
    "key binding future iat": (_kb(iat=NOW + HOUR), REFUSE),
    "key binding without iat": (_kb(iat=None), REFUSE),
    "key binding expired": (_kb(exp=NOW - HOUR), REFUSE),
    "key binding typ JWT": (_kb(header={"typ": "JWT"}), REFUSE),
    "key binding typ missing": (_kb(header={"typ": None}), REFUSE),
    "key binding without sd_hash": (_kb(sd_hash=None), REFUSE),
    "sd_hash after adding a disclosure": (_added_disclosure, REFUSE),
    "sd_hash after removing a disclosure": (_removed_disclosure, REFUSE),
    "sd_hash after reordering disclosures": (_reordered_disclosures, REFUSE),
}

# Where openvc-core 1.37.0 reaches the other verdict: the case, openvc's verdict, and why ours
# stands. Everything else in the corpus must agree.
KNOWN_DISAGREEMENTS: dict[str, str] = {
    # openvc is stricter: it accepts only ES256, ES384, EdDSA and Ed25519 ("algorithm ... is not
    # permitted"). RFC 9901 §7.1 step 2.2 asks for an algorithm "deemed secure for the
    # application" and never "none"; ES512, RS256 (2048-bit keys) and PS256 are registered
    # JWS algorithms (RFC 7518 §3.1, §3.3-3.5) that meet it, and wallets use ES512.
    "node wallet ES512 / EdDSA": REFUSE,
    "forge RS256 issuer": REFUSE,
    "forge PS256 issuer": REFUSE,
    # openvc is stricter: it compares typ as a string. RFC 7515 §4.1.9: typ is a media type and
    # a recipient MUST treat a value without "/" as if "application/" were prepended, so
    # "application/dc+sd-jwt" is the media type SD-JWT VC §2.2.1 requires, spelled out, and
    # "application/kb+jwt" the one RFC 9901 §4.3 requires.
    "issuer typ application/dc+sd-jwt": REFUSE,
    "key binding typ application/kb+jwt": REFUSE,
    # openvc is more lenient: its base64url decoder ignores the unused bits of the last
    # character. RFC 4648 §3.5 lets a decoder reject non-zero pad bits; we do, so that a signed
    # value has one spelling (RFC 7515 §2 base64url, no alternative encodings).
    "issuer signature non-canonical base64url": ACCEPT,
    # openvc is more lenient: its JOSE payload parser keeps the last of two "exp" members (the
    # later date). RFC 7519 §4 allows rejecting duplicate claim names or keeping the last;
    # RFC 8259 §4 warns that receivers then behave unpredictably, and a first-wins reader sees
    # this credential as expired. Rejecting is the choice no reader can disagree with.
    "issuer payload repeats exp": ACCEPT,
    # openvc is more lenient: it verifies key binding with a cnf.jwk that holds the private key.
    # RFC 7800 §3.2: the jwk member represents the presenter's public key. A private key in the
    # credential has been shown to every verifier, so anyone can sign the key binding and it
    # no longer proves possession (RFC 9901 §7.3).
    "holder key carries its private part": ACCEPT,
    # openvc is more lenient: it drops empty parts between "~" before hashing. RFC 9901 §4
    # (ABNF): a Disclosure is base64url of at least one character, and §4.3.1: sd_hash covers
    # the SD-JWT exactly as presented, which here contains "~~".
    "empty disclosure": ACCEPT,
}


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return {name: build() for name, (build, _) in CORPUS.items()}


def ours(text: str) -> tuple[str, str | None]:
    """The presentation flow's verdict: parse, resolve the issuer's key, verify."""
    try:
        presentation = parse_presentation(text)
        issuer = resolve_issuer_key(
            presentation.issuer_header,
            presentation.issuer_payload,
            fetcher=Fetcher(),
            anchors=[],
            now=datetime.fromtimestamp(NOW, UTC),
        )
        verify_presentation(
            presentation, issuer.key, KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=NOW)
        )
    except (SdJwtError, TrustError) as refused:
        return REFUSE, refused.reason
    return ACCEPT, None


def theirs(text: str) -> tuple[str, str | None]:
    policy = VerificationPolicy(
        audience=AUDIENCE,
        nonce=NONCE,
        require_key_binding=True,
        require_status=False,
        now=datetime.fromtimestamp(NOW, UTC),
    )
    try:
        verify_credential(text, policy=policy)
    except OpenvcError as refused:
        return REFUSE, f"{type(refused).__name__}: {refused}"
    return ACCEPT, None


@pytest.mark.parametrize("name", list(CORPUS))
def test_our_verdict(corpus: dict[str, str], name: str) -> None:
    verdict, reason = ours(corpus[name])

    assert verdict == CORPUS[name][1], reason


@pytest.mark.parametrize("name", [name for name in CORPUS if name not in KNOWN_DISAGREEMENTS])
def test_openvc_agrees(corpus: dict[str, str], name: str) -> None:
    verdict, reason = theirs(corpus[name])

    assert verdict == CORPUS[name][1], reason


@pytest.mark.parametrize("name", list(KNOWN_DISAGREEMENTS))
def test_openvc_disagrees_as_recorded(corpus: dict[str, str], name: str) -> None:
    verdict, reason = theirs(corpus[name])

    assert verdict == KNOWN_DISAGREEMENTS[name], reason
    assert verdict != CORPUS[name][1]


def test_every_recorded_disagreement_is_a_corpus_case() -> None:
    assert set(KNOWN_DISAGREEMENTS) <= set(CORPUS)


def test_the_corpus_refuses_and_accepts() -> None:
    verdicts = [verdict for _, verdict in CORPUS.values()]
    assert verdicts.count(ACCEPT) >= 10 and verdicts.count(REFUSE) >= 40
