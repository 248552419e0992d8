"""One case per attack on an SD-JWT VC presentation, each refused with its own reason.

Every case starts from the valid presentation ``Forge`` builds and changes exactly one thing,
so the reason asserted is the check that caught it and not some earlier accident.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sdjwt.sdjwt_forge import (
    AUDIENCE,
    NONCE,
    NOW,
    Forge,
    b64,
    b64json,
    digest,
    disclose,
    disclose_element,
    generate,
    private_jwk,
    public_jwk,
    sd_jwt_of,
    sign,
    tamper,
)

from app.sdjwt import KeyBindingCheck, SdJwtError, parse_presentation, verify_presentation


def verify(forge: Forge, text: str):
    check = KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=NOW)
    return verify_presentation(parse_presentation(text), public_jwk(forge.issuer_key), check)


def with_top_level_disclosure(f: Forge, name: str, value) -> str:
    """A credential whose issuer made ``name`` selectively disclosable, shown by the holder."""
    extra = disclose(name, value)
    payload = f.payload(**{name: None})
    payload["_sd"] = sorted([*payload["_sd"], digest(extra)])
    return f.present(f.issuer_jwt(payload), [*f.shown(), extra])


def with_extra_sd(f: Forge, extra: str, **changes) -> str:
    """The issuer signed one more digest in the top-level ``_sd``; the holder shows it."""
    payload = f.payload(**changes)
    payload["_sd"] = sorted([*payload["_sd"], digest(extra)])
    return f.present(f.issuer_jwt(payload), [*f.shown(), extra])


def alg_none(f: Forge) -> str:
    return f.present(sign({"alg": "none", "typ": "dc+sd-jwt"}, f.payload(), None))


def hmac_with_public_key(f: Forge) -> str:
    # The classic confusion: an HMAC "signed" with the issuer's public key as the secret.
    pem = f.issuer_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return f.present(sign({"alg": "HS256", "typ": "dc+sd-jwt"}, f.payload(), pem))


def bad_issuer_signature(f: Forge) -> str:
    return f.present(tamper(f.issuer_jwt()))


def issuer_signed_by_other_key(f: Forge) -> str:
    return f.present(sign({"alg": "ES256", "typ": "dc+sd-jwt"}, f.payload(), generate()))


def ecdsa_der_signature(f: Forge) -> str:
    # A DER signature is what most crypto libraries produce; JWS requires raw R || S.
    header = b64json({"alg": "ES256", "typ": "dc+sd-jwt"})
    signing_input = f"{header}.{b64json(f.payload())}"
    der = f.issuer_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    return f.present(f"{signing_input}.{b64(der)}")


def bad_kb_signature(f: Forge) -> str:
    sd_jwt = sd_jwt_of(f.issuer_jwt(), f.shown())
    return sd_jwt + tamper(f.key_binding(sd_jwt))


def kb_alg_none(f: Forge) -> str:
    sd_jwt = sd_jwt_of(f.issuer_jwt(), f.shown())
    claims = {"aud": AUDIENCE, "nonce": NONCE, "iat": NOW, "sd_hash": digest(sd_jwt)}
    return sd_jwt + sign({"alg": "none", "typ": "kb+jwt"}, claims, None)


def sd_hash_after_adding(f: Forge) -> str:
    issuer_jwt = f.issuer_jwt()
    key_binding = f.key_binding(sd_jwt_of(issuer_jwt, f.shown()))
    return sd_jwt_of(issuer_jwt, [*f.shown(), f.disclosures["family_name"]]) + key_binding


def sd_hash_after_removing(f: Forge) -> str:
    issuer_jwt = f.issuer_jwt()
    key_binding = f.key_binding(sd_jwt_of(issuer_jwt, f.shown()))
    return sd_jwt_of(issuer_jwt, f.shown()[1:]) + key_binding


def unreferenced_disclosure(f: Forge) -> str:
    # The holder re-signs the KB-JWT, so only the reference check can catch it.
    return f.present(shown=[*f.shown(), disclose("age_over_18", True)])


def duplicate_digest(f: Forge) -> str:
    payload = f.payload()
    payload["_sd"] = [*payload["_sd"], digest(f.disclosures["given_name"])]
    return f.present(f.issuer_jwt(payload))


def duplicate_digest_across_levels(f: Forge) -> str:
    # address.country's digest also at the top level: once direct, once via a disclosure.
    payload = f.payload()
    payload["_sd"] = sorted([*payload["_sd"], digest(f.disclosures["country"])])
    return f.present(f.issuer_jwt(payload))


def duplicate_decoy(f: Forge) -> str:
    payload = f.payload()
    payload["_sd"] = [*payload["_sd"], digest("decoy")]
    return f.present(f.issuer_jwt(payload))


def disclosed_cnf_member(f: Forge) -> str:
    jwk = disclose("jwk", public_jwk(f.holder_key))
    payload = f.payload(cnf={"_sd": [digest(jwk)]})
    return f.present(f.issuer_jwt(payload), [*f.shown(), jwk])


def repeated_disclosure(f: Forge) -> str:
    return f.present(shown=[*f.shown(), f.disclosures["given_name"]])


def sd_alg_below_top_level(f: Forge) -> str:
    return f.present(f.issuer_jwt(f.payload(place={"_sd_alg": "sha-256"})))


def element_disclosure_in_sd(f: Forge) -> str:
    return with_extra_sd(f, disclose_element("x"))


def property_disclosure_in_array(f: Forge) -> str:
    extra = disclose("x", 1)
    payload = f.payload()
    payload["nationalities"].append({"...": digest(extra)})
    return f.present(f.issuer_jwt(payload), [*f.shown(), extra])


def array_digest_with_other_keys(f: Forge) -> str:
    payload = f.payload()
    payload["nationalities"].append({"...": digest("x"), "note": 1})
    return f.present(f.issuer_jwt(payload))


def dots_outside_array(f: Forge) -> str:
    return f.present(f.issuer_jwt(f.payload(place={"...": digest("x")})))


def private_holder_key(f: Forge) -> str:
    return f.present(f.issuer_jwt(f.payload(cnf={"jwk": private_jwk(f.holder_key)})))


ATTACKS: list[tuple[str, Callable[[Forge], str], str]] = [
    ("alg none", alg_none, "Credential is unsigned (alg none), which is never accepted"),
    (
        "HS256 with the public key as secret",
        hmac_with_public_key,
        "Credential uses an HMAC algorithm, which is never accepted",
    ),
    ("bad issuer signature", bad_issuer_signature, "Credential signature does not verify"),
    (
        "issuer signed by another key",
        issuer_signed_by_other_key,
        "Credential signature does not verify",
    ),
    ("ECDSA signature in DER form", ecdsa_der_signature, "Credential signature does not verify"),
    ("bad KB signature", bad_kb_signature, "Key binding signature does not verify"),
    (
        "KB signed by another key",
        lambda f: f.present(key=generate()),
        "Key binding signature does not verify",
    ),
    ("KB alg none", kb_alg_none, "Key binding is unsigned (alg none), which is never accepted"),
    (
        "wrong nonce",
        lambda f: f.present(nonce="replayed-nonce"),
        "Key binding nonce does not match the request",
    ),
    (
        "wrong aud",
        lambda f: f.present(aud="redirect_uri:https://attacker.example/callback"),
        "Key binding audience does not match this verifier",
    ),
    (
        "aud without the redirect_uri: prefix",
        lambda f: f.present(aud="https://verifier.example/callback"),
        "Key binding audience does not match this verifier",
    ),
    (
        "aud as an array",
        lambda f: f.present(aud=[AUDIENCE]),
        "Key binding audience is not a single string",
    ),
    ("stale KB iat", lambda f: f.present(iat=NOW - 301), "Key binding was signed too long ago"),
    ("future KB iat", lambda f: f.present(iat=NOW + 61), "Key binding was signed in the future"),
    ("KB without iat", lambda f: f.present(iat=None), "Key binding has no iat claim"),
    (
        "sd_hash after adding a disclosure",
        sd_hash_after_adding,
        "Key binding does not cover the disclosures presented (sd_hash)",
    ),
    (
        "sd_hash after removing a disclosure",
        sd_hash_after_removing,
        "Key binding does not cover the disclosures presented (sd_hash)",
    ),
    (
        "KB without sd_hash",
        lambda f: f.present(sd_hash=None),
        "Key binding does not cover the disclosures presented (sd_hash)",
    ),
    (
        "unreferenced disclosure",
        unreferenced_disclosure,
        "Presentation contains a disclosure the credential does not reference",
    ),
    (
        "duplicate digest",
        duplicate_digest,
        "The same digest appears more than once in the credential",
    ),
    (
        "duplicate digest across levels",
        duplicate_digest_across_levels,
        "The same digest appears more than once in the credential",
    ),
    (
        "duplicate decoy digest",
        duplicate_decoy,
        "The same digest appears more than once in the credential",
    ),
    (
        "repeated disclosure",
        repeated_disclosure,
        "Presentation contains the same disclosure twice",
    ),
    (
        "disclosed iss",
        lambda f: with_top_level_disclosure(f, "iss", "https://issuer.example"),
        "Credential discloses iss selectively, which SD-JWT VC forbids",
    ),
    (
        "disclosed cnf",
        lambda f: with_top_level_disclosure(f, "cnf", {"jwk": public_jwk(f.holder_key)}),
        "Credential discloses cnf selectively, which SD-JWT VC forbids",
    ),
    (
        "disclosed cnf member",
        disclosed_cnf_member,
        "Credential discloses cnf selectively, which SD-JWT VC forbids",
    ),
    (
        "disclosed exp",
        lambda f: with_top_level_disclosure(f, "exp", NOW + 3600),
        "Credential discloses exp selectively, which SD-JWT VC forbids",
    ),
    (
        "disclosed vct",
        lambda f: with_top_level_disclosure(f, "vct", "urn:example:pid:1"),
        "Credential discloses vct selectively, which SD-JWT VC forbids",
    ),
    (
        "disclosed status",
        lambda f: with_top_level_disclosure(f, "status", {"status_list": {}}),
        "Credential discloses status selectively, which SD-JWT VC forbids",
    ),
    (
        "expired",
        lambda f: f.present(f.issuer_jwt(f.payload(exp=NOW - 31))),
        "Credential has expired",
    ),
    (
        "not yet valid",
        lambda f: f.present(f.issuer_jwt(f.payload(nbf=NOW + 31))),
        "Credential is not valid yet",
    ),
    (
        "issued in the future",
        lambda f: f.present(f.issuer_jwt(f.payload(iat=NOW + 31))),
        "Credential was issued in the future",
    ),
    (
        "credential for another audience",
        lambda f: f.present(f.issuer_jwt(f.payload(aud="redirect_uri:https://other.example/cb"))),
        "Credential is meant for another audience (aud)",
    ),
    (
        "credential audiences without this verifier",
        lambda f: f.present(f.issuer_jwt(f.payload(aud=["x509_san_dns:other.example"]))),
        "Credential is meant for another audience (aud)",
    ),
    (
        "credential aud not a string or list",
        lambda f: f.present(f.issuer_jwt(f.payload(aud={"client_id": AUDIENCE}))),
        "Credential is meant for another audience (aud)",
    ),
    (
        "exp not a number",
        lambda f: f.present(f.issuer_jwt(f.payload(exp="tomorrow"))),
        "Credential exp claim is not a date",
    ),
    (
        "missing KB-JWT",
        lambda f: sd_jwt_of(f.issuer_jwt(), f.shown()),
        "Presentation has no key binding JWT",
    ),
    (
        "legacy typ vc+sd-jwt",
        lambda f: f.present(f.issuer_jwt(typ="vc+sd-jwt")),
        "Credential type header is not dc+sd-jwt",
    ),
    (
        "plain JWT typ",
        lambda f: f.present(f.issuer_jwt(typ="JWT")),
        "Credential type header is not dc+sd-jwt",
    ),
    (
        "KB typ not kb+jwt",
        lambda f: f.present(header={"typ": "JWT"}),
        "Key binding type header is not kb+jwt",
    ),
    (
        "unknown crit",
        lambda f: f.present(f.issuer_jwt(crit=["urn:example:ext"], **{"urn:example:ext": 1})),
        "Credential requires header extensions this verifier does not support",
    ),
    (
        "_sd_alg sha-512",
        lambda f: f.present(f.issuer_jwt(f.payload(_sd_alg="sha-512"))),
        "Credential uses a digest algorithm other than sha-256",
    ),
    (
        "_sd_alg in other case",
        lambda f: f.present(f.issuer_jwt(f.payload(_sd_alg="SHA-256"))),
        "Credential uses a digest algorithm other than sha-256",
    ),
    (
        "_sd_alg below the top level",
        sd_alg_below_top_level,
        "Credential declares _sd_alg below the top level",
    ),
    (
        "disclosure named _sd",
        lambda f: with_extra_sd(f, disclose("_sd", ["x"])),
        "A disclosure uses the reserved claim name _sd or ...",
    ),
    (
        "disclosure named ...",
        lambda f: with_extra_sd(f, disclose("...", "x")),
        "A disclosure uses the reserved claim name _sd or ...",
    ),
    (
        "name clash with a plain claim",
        lambda f: f.present(f.issuer_jwt(f.payload(given_name="Max"))),
        "A disclosed claim clashes with a claim of the same name",
    ),
    (
        "two disclosures of one name",
        lambda f: with_extra_sd(f, disclose("given_name", "Max")),
        "A disclosed claim clashes with a claim of the same name",
    ),
    (
        "array element disclosure in _sd",
        element_disclosure_in_sd,
        "An array element disclosure is referenced as an object property",
    ),
    (
        "property disclosure in an array",
        property_disclosure_in_array,
        "An object property disclosure is referenced as an array element",
    ),
    (
        "array digest with other keys",
        array_digest_with_other_keys,
        "Credential has a malformed array element digest",
    ),
    (
        "... outside an array",
        dots_outside_array,
        "Credential uses the reserved claim name ... outside an array",
    ),
    (
        "_sd not a list",
        lambda f: f.present(f.issuer_jwt(f.payload(_sd="digest"))),
        "Credential has an _sd claim that is not a list of digests",
    ),
    (
        "disclosure of four elements",
        lambda f: f.present(shown=[*f.shown(), b64json(["salt", "a", 1, 2])]),
        "A disclosure is not an array of two or three elements",
    ),
    (
        "disclosure salt not a string",
        lambda f: f.present(shown=[*f.shown(), b64json([1, "a", 1])]),
        "A disclosure salt is not a string",
    ),
    (
        "disclosure name not a string",
        lambda f: f.present(shown=[*f.shown(), b64json(["salt", 7, 1])]),
        "A disclosure claim name is not a string",
    ),
    (
        "disclosure not JSON",
        lambda f: f.present(shown=[*f.shown(), b64(b"not json")]),
        "A disclosure is not valid JSON",
    ),
    (
        "no vct",
        lambda f: f.present(f.issuer_jwt(f.payload(vct=None))),
        "Credential has no vct type",
    ),
    (
        "no cnf",
        lambda f: f.present(f.issuer_jwt(f.payload(cnf=None))),
        "Credential is not bound to a holder key (no cnf.jwk)",
    ),
    (
        "cnf with a private key",
        private_holder_key,
        "Credential holder key (cnf.jwk) is not a usable public key",
    ),
]


@pytest.mark.parametrize(
    ("build", "reason"),
    [pytest.param(build, reason, id=name) for name, build, reason in ATTACKS],
)
def test_attack_is_refused_with_its_reason(build: Callable[[Forge], str], reason: str) -> None:
    forge = Forge()
    with pytest.raises(SdJwtError) as refused:
        verify(forge, build(forge))
    assert refused.value.reason == reason
