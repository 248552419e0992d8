"""What a valid presentation yields, where the time windows end, and how input is parsed."""

from __future__ import annotations

import pytest
from sdjwt_forge import (
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
    public_jwk,
    sd_jwt_of,
    sign,
)

from app.sdjwt import (
    KeyBindingCheck,
    SdJwtError,
    VerifiedCredential,
    parse_presentation,
    verify_presentation,
)

CHECK = KeyBindingCheck(audience=AUDIENCE, nonce=NONCE, now=NOW)


def verify(forge: Forge, text: str, **options) -> VerifiedCredential:
    return verify_presentation(
        parse_presentation(text), public_jwk(forge.issuer_key), CHECK, **options
    )


def test_valid_presentation_yields_the_disclosed_claims_nested_and_in_arrays() -> None:
    forge = Forge()

    credential = verify(forge, forge.present())

    assert credential.claims == {
        "iss": "https://issuer.example",
        "vct": "urn:example:pid:1",
        "iat": NOW - 60,
        "exp": NOW + 3600,
        "cnf": {"jwk": public_jwk(forge.holder_key)},
        "given_name": "Erika",
        "address": {"locality": "Berlin", "country": "DE"},
        "nationalities": ["DE", "FR"],
    }
    assert credential.issuer == "https://issuer.example"
    assert credential.vct == "urn:example:pid:1"
    assert credential.cnf_jwk == public_jwk(forge.holder_key)
    assert credential.status is None
    assert credential.header == {"alg": "ES256", "typ": "dc+sd-jwt"}


def test_claims_not_disclosed_stay_hidden() -> None:
    forge = Forge()

    credential = verify(forge, forge.present(shown=[]))

    assert "given_name" not in credential.claims
    assert "address" not in credential.claims
    assert credential.claims["nationalities"] == ["DE"]


def test_parent_without_its_nested_disclosure_shows_only_plain_members() -> None:
    forge = Forge()
    shown = [forge.disclosures["address"]]

    credential = verify(forge, forge.present(shown=shown))

    assert credential.claims["address"] == {"locality": "Berlin"}


def test_recursive_disclosure_of_an_array_whose_elements_are_disclosures() -> None:
    # RFC 9901 §4.2.6: the array is disclosable, and so is each element inside it.
    forge = Forge()
    elements = [disclose_element("DE"), disclose_element("FR"), disclose_element("UK")]
    array = disclose("citizenships", [{"...": digest(element)} for element in elements])
    payload = forge.payload()
    payload["_sd"] = sorted([*payload["_sd"], digest(array)])
    shown = [array, elements[0], elements[2]]

    credential = verify(forge, forge.present(forge.issuer_jwt(payload), shown))

    assert credential.claims["citizenships"] == ["DE", "UK"]


def test_status_is_returned_for_the_status_list_check() -> None:
    forge = Forge()
    status = {"status_list": {"idx": 7, "uri": "https://issuer.example/status/1"}}

    credential = verify(forge, forge.present(forge.issuer_jwt(forge.payload(status=status))))

    assert credential.status == status


def test_issuer_key_may_be_a_key_object_or_a_jwk() -> None:
    forge = Forge()
    check = CHECK
    presentation = parse_presentation(forge.present())

    from_object = verify_presentation(presentation, forge.issuer_key.public_key(), check)
    from_jwk = verify_presentation(presentation, public_jwk(forge.issuer_key), check)

    assert from_object == from_jwk


@pytest.mark.parametrize("alg", ["EdDSA", "Ed25519", "ES384", "PS256", "RS256"])
def test_other_issuer_algorithms_verify(alg: str) -> None:
    forge = Forge(issuer_key=generate(alg))
    issuer_jwt = sign({"alg": alg, "typ": "dc+sd-jwt"}, forge.payload(), forge.issuer_key)

    assert verify(forge, forge.present(issuer_jwt)).vct == "urn:example:pid:1"


def test_algorithm_outside_the_caller_allow_list_is_refused() -> None:
    forge = Forge()

    with pytest.raises(SdJwtError) as refused:
        verify(forge, forge.present(), allowed_algs=("EdDSA",))

    assert refused.value.reason == "Credential uses a signing algorithm that is not allowed"


@pytest.mark.parametrize(
    ("expected", "signed"), [({"audience": ""}, {"aud": ""}), ({"nonce": ""}, {"nonce": ""})]
)
def test_empty_expected_audience_or_nonce_matches_nothing(expected: dict, signed: dict) -> None:
    forge = Forge()
    check = KeyBindingCheck(**{"audience": AUDIENCE, "nonce": NONCE, "now": NOW, **expected})

    with pytest.raises(SdJwtError) as refused:
        verify_presentation(
            parse_presentation(forge.present(**signed)), public_jwk(forge.issuer_key), check
        )

    assert refused.value.reason == "Key binding cannot be checked without an audience and a nonce"


def test_typ_with_application_prefix_is_the_same_media_type() -> None:
    # RFC 7515 §4.1.9: "application/" is implied, and media types ignore case.
    forge = Forge()

    verify(forge, forge.present(forge.issuer_jwt(typ="application/DC+SD-JWT")))


@pytest.mark.parametrize(
    ("changes", "kb_iat"),
    [
        pytest.param({"exp": NOW - 29}, NOW, id="expired within leeway"),
        pytest.param({"nbf": NOW + 29}, NOW, id="not yet valid within leeway"),
        pytest.param({}, NOW - 300, id="KB at max age"),
        pytest.param({}, NOW + 60, id="KB at future skew"),
        pytest.param({"iat": NOW + 30}, NOW, id="issued in the future within leeway"),
        pytest.param({"aud": AUDIENCE}, NOW, id="credential for this verifier"),
        pytest.param({"aud": ["x509_san_dns:other.example", AUDIENCE]}, NOW, id="aud list"),
    ],
)
def test_time_window_edges_are_accepted(changes: dict, kb_iat: int) -> None:
    forge = Forge()

    verify(forge, forge.present(forge.issuer_jwt(forge.payload(**changes)), iat=kb_iat))


def test_iat_may_be_disclosed_selectively() -> None:
    # SD-JWT VC lists iat among the claims that MAY be selectively disclosed.
    forge = Forge()
    iat = disclose("iat", NOW - 60)
    payload = forge.payload(iat=None)
    payload["_sd"] = sorted([*payload["_sd"], digest(iat)])

    credential = verify(forge, forge.present(forge.issuer_jwt(payload), [*forge.shown(), iat]))

    assert credential.claims["iat"] == NOW - 60


def test_deeply_nested_claims_are_refused_not_recursed() -> None:
    forge = Forge()
    nested: dict = {}
    for _ in range(40):
        nested = {"n": nested}

    with pytest.raises(SdJwtError) as refused:
        verify(forge, forge.present(forge.issuer_jwt(forge.payload(deep=nested))))

    assert refused.value.reason == "Credential nests its claims too deeply"


def test_presentation_parts_are_split_as_presented() -> None:
    forge = Forge()
    issuer_jwt = forge.issuer_jwt()
    text = forge.present(issuer_jwt)

    presentation = parse_presentation(text)

    assert presentation.issuer_jwt == issuer_jwt
    assert presentation.disclosures == forge.shown()
    assert presentation.sd_jwt_without_kb == sd_jwt_of(issuer_jwt, forge.shown())
    assert text == presentation.sd_jwt_without_kb + presentation.kb_jwt
    assert presentation.issuer_header["typ"] == "dc+sd-jwt"
    assert presentation.issuer_payload["vct"] == "urn:example:pid:1"


def test_presentation_without_key_binding_parses_but_does_not_verify() -> None:
    forge = Forge()

    presentation = parse_presentation(sd_jwt_of(forge.issuer_jwt(), []))

    assert presentation.kb_jwt is None
    with pytest.raises(SdJwtError):
        verify_presentation(presentation, public_jwk(forge.issuer_key), CHECK)


def test_hand_built_presentation_cannot_bind_other_disclosures() -> None:
    forge = Forge()
    honest = parse_presentation(forge.present())
    forged = parse_presentation(forge.present())
    object.__setattr__(
        forged, "disclosures", [*honest.disclosures, forge.disclosures["family_name"]]
    )

    with pytest.raises(SdJwtError):
        verify_presentation(forged, public_jwk(forge.issuer_key), CHECK)


def test_oversized_input_is_refused() -> None:
    with pytest.raises(SdJwtError) as refused:
        parse_presentation("e" * (64 * 1024 + 1))

    assert refused.value.reason == "Presentation is too large"


def test_too_many_disclosures_are_refused() -> None:
    forge = Forge()
    text = sd_jwt_of(forge.issuer_jwt(), ["WyJhIiwiYiJd"] * 201)

    with pytest.raises(SdJwtError) as refused:
        parse_presentation(text)

    assert refused.value.reason == "Presentation has too many disclosures"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("~", id="only a tilde"),
        pytest.param("garbage", id="no tilde"),
        pytest.param("a.b.c", id="JWT without tilde"),
        pytest.param("a.b~", id="two-part JWT"),
        pytest.param("a.b.c.d~", id="four-part JWT"),
        pytest.param("e30.e30.c2ln~~", id="empty disclosure"),
        pytest.param("e30=.e30.c2ln~", id="padded base64"),
        pytest.param("e30.e30.c2ln~WyJh IiwiYiJd~", id="space in disclosure"),
        pytest.param("W10.e30.c2ln~", id="header not an object"),
        pytest.param("e30.bm90IGpzb24.c2ln~", id="payload not JSON"),
        pytest.param(b64json({"a": 1}) + "." + "e30" + ".c2ln~a.b", id="KB not a JWS"),
        pytest.param("e30.e30.c2ln~é", id="non-ASCII"),
        pytest.param(None, id="None"),
        pytest.param(b"e30.e30.c2ln~", id="bytes"),
        pytest.param(b64(b"[" * 40000) + ".e30.c2ln~", id="deeply nested header"),
    ],
)
def test_garbage_input_is_refused(text) -> None:
    with pytest.raises(SdJwtError):
        parse_presentation(text)


def test_any_single_character_change_is_refused_cleanly() -> None:
    # A crude fuzz: every mutation is refused, and with SdJwtError, never another exception.
    forge = Forge()
    text = forge.present()
    for index in range(0, len(text), 3):
        for replacement in ("", "~", ".", "A"):
            mutated = text[:index] + replacement + text[index + 1 :]
            if mutated == text:
                continue
            with pytest.raises(SdJwtError):
                verify(forge, mutated)


@pytest.mark.parametrize(("jwk_alg", "accepted"), [("ES256", True), ("ES384", False)])
def test_a_holder_key_naming_its_algorithm_signs_key_bindings_with_that_one_only(
    jwk_alg: str, accepted: bool
) -> None:
    forge = Forge()
    cnf = {"jwk": {**public_jwk(forge.holder_key), "alg": jwk_alg}}
    presentation = forge.present(forge.issuer_jwt(forge.payload(cnf=cnf)))

    if accepted:
        assert verify(forge, presentation).cnf_jwk["alg"] == jwk_alg
    else:
        with pytest.raises(SdJwtError) as refused:
            verify(forge, presentation)
        assert str(refused.value) == "Key binding key is meant for another algorithm"
